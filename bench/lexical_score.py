"""The attribute lexical list at 1k / 10k / 100k facts: the engine's ``search::score`` against the BM25 computed in the
query (db/lexical_score.py), per statement, side by side, on the same rows and the same plan.

For each size, ``bench/retrieval.py``'s synthetic facts are loaded without embeddings (the lexical list never reads
them), then for each of its questions the list statement the service sends now and the same statement scored by the
engine (one ``search::score(n)`` per branch, as before Session 5) run alternately; each statement's engine time (the
``time`` of its result) is kept, and whether both return the same rows in the same order. Also times one scored
``@1@`` of a single rare word: the engine's scorer alone, which grows with the table. Run:
``PYTHONPATH=shared:infra:. nice -n 10 .venv/bin/python bench/lexical_score.py --sizes 1000,10000``
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from typing import Any

from bench_env import ROOT  # noqa: F401,I001  # first: paths and environment before the service imports
from retrieval import QUERIES, asked, facts, load_rows, new_context

from agent_memory.clock import utcnow
from agent_memory.composition import Services, get_services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.retrieval_store import ROWS, ReadFilter, RetrievalStore, lean_projection, plan_terms
from agent_memory.db.term_frequencies import TermFrequencies
from agent_memory.domain.retrieval import query_terms

UNITS = {'ns': 1e-6, 'µs': 1e-3, 'us': 1e-3, 'ms': 1.0, 's': 1000.0}


def engine_ms(value: str) -> float:
    found = re.fullmatch(r'([\d.]+)(\D+)', value)
    assert found, value
    return float(found.group(1)) * UNITS[found.group(2)]


def timed(store: MemoryStore, sql: str, params: dict[str, Any]) -> tuple[float, list[dict[str, Any]]]:
    """Engine time of the statement and its rows."""
    raw = store.db._connection().query_raw(f'USE NS {store.db.namespace} DB {store.database};\n{sql}', params)
    result = raw['result'][-1]
    assert result.get('status') == 'OK', result
    return engine_ms(result['time']), result['result']


def engine_scored(terms: list[str], counts: dict[tuple[str, str], int], predicate: str) -> tuple[str, dict[str, Any]]:
    """The list as it was sent before Session 5: the same branches, each scored by the engine."""
    plan = plan_terms(terms, {t: counts[('attribute', t)] for t in terms}, counts[('attribute', ROWS)])
    branches = [*((t,) for t in plan.rare), *plan.together]
    clauses = ' OR '.join(f'search_text @{i}@ $attribute_{i}' for i in range(1, len(branches) + 1))
    score = ' + '.join(f'search::score({i})' for i in range(1, len(branches) + 1))
    sql = (
        f'SELECT {lean_projection("attribute")}, {score} AS bm25 FROM attribute_lean '
        f'WHERE ({clauses}) AND {predicate} ORDER BY bm25 DESC LIMIT 32;'
    )
    return sql, {f'attribute_{i}': ' '.join(b) for i, b in enumerate(branches, start=1)}


def run(size: int, services: Services) -> dict[str, Any]:
    rows = facts(size)
    ctx, _ = new_context(services, size)
    load_rows(services, ctx, rows, None, sorted({name for name, _, _ in rows}), None)
    store = services.store(ctx)
    db, where = RetrievalStore(store), ReadFilter(['*'], utcnow())
    params = where.params()
    old_ms, new_ms, same, matched = [], [], 0, []
    questions = asked(rows, size)
    for question, _ in questions:
        terms = query_terms(question)
        statements, words = db._text_statements({'attribute': 32}, terms, where)
        counts = db.term_counts(['attribute'], terms)
        old_sql, old_words = engine_scored(terms, counts, str(where.predicate('attribute')))
        old_t, old_rows = timed(store, old_sql, {**params, **old_words})
        new_t, new_rows = timed(store, statements['attribute'], {**params, **words})
        old_ms.append(old_t)
        new_ms.append(new_t)
        same += [r['id'] for r in old_rows] == [r['id'] for r in new_rows]
        matched.append(len(new_rows))
    rare = {'w': 'ramen'}
    scorer = [timed(store, 'SELECT id, search::score(1) AS s FROM attribute_lean WHERE search_text @1@ $w;', rare)[0] for _ in range(5)]
    unscored = [timed(store, 'SELECT id FROM attribute_lean WHERE search_text @1@ $w;', rare)[0] for _ in range(5)]
    # a common term new to the process: counted to the cap, then its first match scored (the engine's scorer)
    probes = []
    for _ in range(3):
        fresh = RetrievalStore(store, TermFrequencies())
        fresh.term_counts(['attribute'], [])  # the row count and mean length first: the term's probe alone is timed
        started = time.perf_counter()
        fresh.term_counts(['attribute'], ['abbott'])
        probes.append((time.perf_counter() - started) * 1000)
    services.control.delete_context(ctx)
    services.drop_context(ctx)
    return {
        'size': size, 'old_p50': statistics.median(old_ms), 'old_p95': pct(old_ms, 95), 'new_p50': statistics.median(new_ms),
        'new_p95': pct(new_ms, 95), 'same': same, 'questions': len(questions), 'rows': statistics.mean(matched),
        'scored_rare': statistics.median(scorer), 'probe': statistics.median(probes), 'unscored_rare': statistics.median(unscored),
        'load': os.getloadavg()[0],
    }  # fmt: skip


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sizes', default='1000,10000')
    args = parser.parse_args()
    services = get_services()
    results = []
    for size in (int(s) for s in args.sizes.split(',')):
        print(f'size {size}', file=sys.stderr)
        results.append(run(size, services))
    print(f'\nattribute lexical list, engine ms per statement ({QUERIES} questions; "ramen": one rare word, in 1.4 % of rows;')
    print('"abbott" probe: wall ms counting a common word, in 3.9 % of rows, new to the process)')
    head = ('search::score p50', 'p95', 'in-query p50', 'p95', 'same order', 'rows', '"ramen" scored', 'unscored', '"abbott" probe',
            'load avg')  # fmt: skip
    print(f'{"facts":>7} ' + ' '.join(f'{c:>17}' for c in head))
    for r in results:
        values = (f'{r["old_p50"]:.1f}', f'{r["old_p95"]:.1f}', f'{r["new_p50"]:.1f}', f'{r["new_p95"]:.1f}',
                  f'{r["same"]}/{r["questions"]}', f'{r["rows"]:.1f}', f'{r["scored_rare"]:.2f}', f'{r["unscored_rare"]:.2f}',
                  f'{r["probe"]:.1f}', f'{r["load"]:.1f}')  # fmt: skip
        print(f'{r["size"]:>7} ' + ' '.join(f'{v:>17}' for v in values))


if __name__ == '__main__':
    main()
