"""Expiry's cost per row against the sweep's batch size (rows per UPDATE statement), same rows in each database.

Issue 14's expiry goal is 1 % of 1M (10,000 rows) newly crossing the TTL in ≤ 2 s. `bench/lifecycle_designs.py` showed
that cost is the UPDATE of the crossing rows, not finding them; this probe asks whether the statement size matters (a
1,000-row INSERT costs 13x per row what a 25-row one does on this schema: `bench/insert_rates.py`).

    PYTHONPATH=shared:infra:.:bench nice -n 10 .venv/bin/python bench/expire_batch.py --rows 6000 --batches 5000,1000,250,50

Session 4: every row carries an embedding, as production attributes do (before, the bench rows had none:
``--no-vectors``), and each batch size runs on the vector fields as declared before migration 0017 (``coerced``) and
after it (``plain``), same code and rows (bench/vector_types.py).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time

from bench_env import ROOT  # noqa: F401,I001  # first: paths and environment before the service imports
from lifecycle_designs import lean, load
from vector_types import VECTOR_TYPES, declare, parse_types

from agent_memory.composition import IMPORTANCE
from agent_memory.db.connection import Database
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.db.migrations import ensure_migrated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rows', type=int, default=6000, help='facts per database; a third of them cross the TTL')
    parser.add_argument('--batches', default='5000,1000,250,50')
    parser.add_argument('--lean', action='store_true', help='only the indexes the sweeps read (lifecycle_designs.lean)')
    parser.add_argument('--vector-types', type=parse_types, default=list(VECTOR_TYPES), help='coerced (before 0017), plain, or both')
    parser.add_argument('--no-vectors', action='store_true', help='rows without an embedding (the bench before Session 4)')
    args = parser.parse_args()
    now = dt.datetime.now(dt.UTC)
    db = Database('mem://', 'expirebatch')
    schema = f'{" (lean schema)" if args.lean else ""}{", no embeddings" if args.no_vectors else ", each with an embedding"}'
    print(f'# expiry against batch size, {args.rows:,} facts{schema}, {os.cpu_count()} CPUs')
    print('| vector fields | batch | expired | s | CPU ms/row | load avg |')
    print('|---|---|---|---|---|---|')
    for batch in (int(b) for b in args.batches.split(',')):
        for types in args.vector_types:
            name = f'b{batch}{types}'
            ensure_migrated(db, name, 'context')
            declare(db, name, types)
            if args.lean:
                lean(db, name)
            load(db, name, args.rows, now, 'importance_base', 0.34, vectors=not args.no_vectors)
            started, cpu = time.perf_counter(), time.process_time()
            expired = LifecycleStore(db, name, IMPORTANCE, batch=batch).expire(now, now - dt.timedelta(days=7))
            elapsed, cpu_ms = time.perf_counter() - started, 1000 * (time.process_time() - cpu) / max(expired, 1)
            print(f'| {types} | {batch:,} | {expired:,} | {elapsed:.2f} | {cpu_ms:.2f} | {os.getloadavg()[0]:.1f} |', flush=True)
            db.query(name, f'REMOVE DATABASE {name};')  # the next database's load and sweep run with this one's memory freed


if __name__ == '__main__':
    main()
