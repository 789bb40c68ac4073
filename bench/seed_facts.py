"""What the graph's "facts of the seed entities, closest to the query first" costs against the seed's size.

A first-person question seeds the caller's own entity, and in a long-lived memory that entity holds most of the facts.
Ordering them by closeness reads every one with its embedding (~0.2 ms a row). `_seed_attributes` (Session 5) reads
them whole only up to ``seed_facts_exact`` facts, and beyond takes them among the query's nearest facts. Printed side
by side in one run, each statement's engine time (median of 10 query vectors), for a seed of each size among eight
equal entities plus a five-fact one:

    PYTHONPATH=shared:infra:.:bench .venv/bin/python bench/seed_facts.py --facts 1000,4000,10000

Each row carries a real MiniLM embedding of one of `bench/retrieval.py`'s 10k synthetic facts (its cached vectors;
computed once if missing), and the queries are ten of those facts' vectors: random vectors make the HNSW search itself
slow (no neighbourhoods to follow), which is not what the service sees. "overlap" is the share of the before
statement's rows the after statement returns: below 1 only where the seed is beyond ``seed_facts_exact``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import statistics
from typing import Any

from bench_env import insert_sql  # noqa: I001  # first: paths and environment before the service imports
from lifecycle_designs import rows
from retrieval import corpus_vectors

from agent_memory.composition import get_services
from agent_memory.db import sdk
from agent_memory.db.connection import Database
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.predicates import CURRENT
from agent_memory.db.retrieval_store import PROJECTIONS, _seed_attributes

BEFORE = (  # the statement before Session 5: every fact of the seeds read with its embedding
    f'SELECT {PROJECTIONS["attribute"]}, IF embedding AND $vector THEN vector::similarity::cosine(embedding, $vector) '
    f'ELSE 0 END AS closeness FROM attribute WHERE entity_ref IN $h0 AND {CURRENT} '
    'ORDER BY closeness DESC, importance DESC LIMIT 32;'
)
UNITS = {'ns': 1e-6, 'µs': 1e-3, 'ms': 1.0, 's': 1000.0}


def engine_ms(text: str) -> float:
    match = re.fullmatch(r'([\d.]+)(ns|µs|ms|s)', text)
    assert match is not None, text
    return float(match[1]) * UNITS[match[2]]


def timed(db: Database, name: str, sql: str, seed: str, queries: list[list[float]], now: dt.datetime) -> tuple[float, list[set[str]]]:
    times, found = [], []
    for vector in queries:
        params: dict[str, Any] = {'h0': [seed], 'vector': sdk.Vector(vector), 'now': now}
        result = db._connection().query_raw(f'USE NS {db.namespace} DB {name};\n{sql}', params)['result'][-1]
        assert result['status'] == 'OK', result
        times.append(engine_ms(result['time']))
        found.append({str(row['id']) for row in result['result']})
    return statistics.median(times), found


def with_vectors(batch: list[dict[str, Any]], vectors: Any) -> list[dict[str, Any]]:
    for row in batch:
        row['embedding'] = sdk.Vector(vectors[int(str(row['id'].id)) % len(vectors)].tolist())
    return batch


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--facts', default='1000,4000,10000', help='facts per database (eight entities share them; at most 10,000)')
    args = parser.parse_args()
    now = dt.datetime.now(dt.UTC)
    vectors, _ = corpus_vectors(get_services(), 10_000)
    queries = [vectors[i * 997].tolist() for i in range(10)]
    db = Database('mem://', 'seedfacts')
    after = _seed_attributes('$h0', 32, CURRENT)
    print('| facts | seed facts | before ms (rows) | after ms (rows) | overlap | load avg |')
    print('|---|---|---|---|---|---|')
    for n in (int(x) for x in args.facts.split(',')):
        assert n <= len(vectors), 'one distinct embedding per fact'
        name = f'f{n}'
        ensure_migrated(db, name, 'context')
        for start in range(0, n, 500):
            db.query(
                name, *insert_sql('attribute', with_vectors(rows(start, min(n, start + 500), n, now, 'importance_base', 0.0), vectors))
            )
        small = with_vectors(rows(n, n + 5, n, now, 'importance_base', 0.0), vectors)
        for row in small:
            row['entity'] = sdk.RecordID('entity', ['person', 'small'])
        db.query(name, *insert_sql('attribute', small))
        db.query(name, 'REBUILD INDEX attribute_embedding ON attribute;')  # as the hourly sweep does after growth
        for seed, size in (('person/p0', n // 8), ('person/small', 5)):
            (b_ms, b_rows), (a_ms, a_rows) = (timed(db, name, sql, seed, queries, now) for sql in (BEFORE, after))
            overlap = statistics.mean(len(a & b) / max(1, len(b)) for a, b in zip(a_rows, b_rows, strict=True))
            sizes = f'{statistics.mean(map(len, b_rows)):.0f}) | {a_ms:.1f} ({statistics.mean(map(len, a_rows)):.0f}'
            print(f'| {n:,} | {size:,} | {b_ms:.1f} ({sizes}) | {overlap:.2f} | {os.getloadavg()[0]:.1f} |', flush=True)
        db.query(name, f'REMOVE DATABASE {name};')


if __name__ == '__main__':
    main()
