"""Expiry's cost per row against the sweep's batch size (rows per UPDATE statement), same rows in each database.

Issue 14's expiry goal is 1 % of 1M (10,000 rows) newly crossing the TTL in ≤ 2 s. `bench/lifecycle_designs.py` showed
that cost is the UPDATE of the crossing rows, not finding them; this probe asks whether the statement size matters (a
1,000-row INSERT costs 13x per row what a 25-row one does on this schema: `bench/insert_rates.py`).

    PYTHONPATH=shared:infra:.:bench nice -n 10 .venv/bin/python bench/expire_batch.py --rows 6000 --batches 5000,1000,250,50
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import time

from bench_env import ROOT  # noqa: F401,I001  # first: paths and environment before the service imports
from lifecycle_designs import lean, load

from agent_memory.composition import IMPORTANCE
from agent_memory.db.connection import Database
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.db.migrations import ensure_migrated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rows', type=int, default=6000, help='facts per database; a third of them cross the TTL')
    parser.add_argument('--batches', default='5000,1000,250,50')
    parser.add_argument('--lean', action='store_true', help='only the indexes the sweeps read (lifecycle_designs.lean)')
    args = parser.parse_args()
    now = dt.datetime.now(dt.UTC)
    db = Database('mem://', 'expirebatch')
    print(f'# expiry against batch size, {args.rows:,} facts{" (lean schema)" if args.lean else ""}, {os.cpu_count()} CPUs')
    print('| batch | expired | s | CPU ms/row | load avg |')
    print('|---|---|---|---|---|')
    for batch in (int(b) for b in args.batches.split(',')):
        name = f'b{batch}'
        ensure_migrated(db, name, 'context')
        if args.lean:
            lean(db, name)
        load(db, name, args.rows, now, 'importance_base', 0.34)
        started, cpu = time.perf_counter(), time.process_time()
        expired = LifecycleStore(db, name, IMPORTANCE, batch=batch).expire(now, now - dt.timedelta(days=7))
        elapsed, cpu_ms = time.perf_counter() - started, 1000 * (time.process_time() - cpu) / max(expired, 1)
        print(f'| {batch:,} | {expired:,} | {elapsed:.2f} | {cpu_ms:.2f} | {os.getloadavg()[0]:.1f} |', flush=True)


if __name__ == '__main__':
    main()
