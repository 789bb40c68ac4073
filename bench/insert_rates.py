"""How fast bench rows go into an embedded SurrealDB, and what the indexes cost per row (issue 14's loading floor).

Each configuration inserts the same N attribute rows into a fresh ``mem://`` database that has the context schema
(every migration), then again with the attribute indexes removed, so the difference is what the indexes cost:

* ``INSERT INTO attribute $rows`` with S rows bound per statement (one statement per query), S = 25 / 200 / 1,000;
* 10 statements of 25 rows per query (the lifecycle bench's loader now) and 40 of 50 (its loader before);
* an in-engine ``FOR $r IN $rows { CREATE … }`` over 250 bound rows (the trace loader's shape).

``--vectors`` adds a 384-float embedding to every row (near-copies of real MiniLM vectors from the retrieval cache, or
random ones if it is empty), so the HNSW index is part of the cost.

    PYTHONPATH=shared:infra:.:bench nice -n 10 .venv/bin/python bench/insert_rates.py --rows 2000 [--vectors]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from bench_env import ROOT, STATEMENT_ROWS, STATEMENTS_PER_QUERY, insert_sql  # noqa: F401,I001  # first: paths and environment before the service imports
from lifecycle_designs import rows

from agent_memory.db.connection import Database
from agent_memory.db.migrations import ensure_migrated

Loader = Callable[[Database, str, list[dict[str, Any]]], None]


def insert_statements(size: int) -> Loader:
    def load(db: Database, name: str, batch: list[dict[str, Any]]) -> None:
        for start in range(0, len(batch), size):
            db.query(name, 'INSERT INTO attribute $rows RETURN NONE;', {'rows': batch[start : start + size]})

    return load


def many_statements(db: Database, name: str, batch: list[dict[str, Any]]) -> None:
    for start in range(0, len(batch), STATEMENT_ROWS * STATEMENTS_PER_QUERY):
        db.query(name, *insert_sql('attribute', batch[start : start + STATEMENT_ROWS * STATEMENTS_PER_QUERY]))


def old_lifecycle_loader(db: Database, name: str, batch: list[dict[str, Any]]) -> None:
    """The lifecycle bench's loader before: 40 statements of 50 rows per query."""
    for start in range(0, len(batch), 2000):
        chunks = [batch[k : k + 50] for k in range(start, min(len(batch), start + 2000), 50)]
        db.query(name, '\n'.join(f'INSERT INTO attribute $r{j} RETURN NONE;' for j in range(len(chunks))),
                 {f'r{j}': chunk for j, chunk in enumerate(chunks)})  # fmt: skip


def for_loop(db: Database, name: str, batch: list[dict[str, Any]]) -> None:
    for start in range(0, len(batch), 250):
        db.query(name, 'FOR $r IN $rows { CREATE attribute CONTENT $r RETURN NONE; };', {'rows': batch[start : start + 250]})


LOADERS: dict[str, Loader] = {
    'INSERT 25/stmt': insert_statements(25),
    'INSERT 200/stmt': insert_statements(200),
    'INSERT 1,000/stmt': insert_statements(1000),
    'INSERT 10×25/query': many_statements,
    'INSERT 40×50/query': old_lifecycle_loader,
    'FOR 250 CREATE': for_loop,
}


def attribute_indexes(db: Database, name: str) -> list[str]:
    info = db.query(name, 'INFO FOR TABLE attribute;')[-1]
    return sorted(info['indexes'])


def vectors_for(n: int) -> np.ndarray[Any, Any]:
    cached = sorted((ROOT / 'bench' / '.cache').glob('retrieval-attributes-*.npy'))
    rng = np.random.default_rng(1)
    base = np.load(cached[0])[:4096] if cached else rng.normal(size=(4096, 384))
    out = base[np.arange(n) % len(base)] + rng.normal(0, 0.01, (n, 384))
    return (out / np.linalg.norm(out, axis=1, keepdims=True)).astype(np.float32)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rows', type=int, default=2_000)
    parser.add_argument('--vectors', action='store_true', help='rows carry a 384-d embedding (HNSW index cost)')
    parser.add_argument('--only', default='', help='comma-separated loader names (default: all)')
    args = parser.parse_args()
    now = dt.datetime.now(dt.UTC)
    batch = rows(0, args.rows, args.rows, now, 'importance_base')
    if args.vectors:
        for row, vector in zip(batch, vectors_for(args.rows).tolist(), strict=True):
            row['embedding'] = vector
    db = Database('mem://', 'insertrates')
    chosen = [n for n in LOADERS if not args.only or n in args.only.split(',')]
    print(f'# insert rates, {args.rows:,} attribute rows{" with 384-d embeddings" if args.vectors else ""}, {os.cpu_count()} CPUs')
    print('| loader | indexes | rows/s | CPU ms/row | s | load avg |')
    print('|---|---|---|---|---|---|')
    for k, title in enumerate(chosen):
        loader = LOADERS[title]
        for indexed in (True, False):
            name = f'r{k}{"i" if indexed else "n"}'
            ensure_migrated(db, name, 'context')
            dropped = [] if indexed else attribute_indexes(db, name)
            for index in dropped:
                db.query(name, f'REMOVE INDEX {index} ON attribute;')
            started, cpu = time.perf_counter(), time.process_time()
            loader(db, name, batch)
            elapsed, cpu_ms = time.perf_counter() - started, 1000 * (time.process_time() - cpu) / args.rows
            label = 'all (' + ', '.join(attribute_indexes(db, name)) + ')' if indexed and k == 0 else ('all' if indexed else 'none')
            cells = f'{args.rows / elapsed:,.0f} | {cpu_ms:.2f} | {elapsed:.1f} | {os.getloadavg()[0]:.1f}'
            print(f'| {title} | {label} | {cells} |', flush=True)
            db.query(name, 'REMOVE TABLE attribute;')


if __name__ == '__main__':
    main()
