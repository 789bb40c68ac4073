"""Lifecycle sweeps, old design beside new in one run (issue 14), on ``mem://`` and through the route on SurrealKV.

Old: decay multiplies and stamps every fact row in 5,000-row batches that re-select from the start;
expiry re-reads every old context row each hour. New (migration 0015): decay bumps the context's decay
clock (importance is computed on read), expiry reads the ``expiry_from`` index of open context rows,
trace purge walks ``created_at`` forward.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/lifecycle_designs.py --sizes 10000,100000

Data per size N: attribute rows, 1/3 each context/knowledge/identity. Of the context rows, half were
expired by earlier sweeps (known 30 days ago, closed 23 days ago), 1 % of N (``--crossing``) cross the 7-day
TTL now, the rest are an hour old. N traces (``--traces``), 10 % (``--due``) past a 30-day window. Rows go in
as small bound INSERT statements (``bench_env.insert_sql``); ``--lean`` drops the indexes no sweep reads, and
``--old-budget`` stops an old sweep after that many seconds (its count is then short of the new one's).
Both designs get the same rows in their own database; results are checked against each other (sum of
importance after one decay step, rows expired).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench_env import STATEMENT_ROWS, STATEMENTS_PER_QUERY, insert_sql, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports

os.environ.setdefault('AGENT_MEMORY_MANAGEMENT_KEY', 'bench-management-key')

from surrealdb import RecordID  # noqa: E402
from vector_types import unit_vector  # noqa: E402

from agent_memory.composition import IMPORTANCE  # noqa: E402
from agent_memory.config import get_settings  # noqa: E402
from agent_memory.db.connection import Database  # noqa: E402
from agent_memory.db.lifecycle_store import LifecycleStore  # noqa: E402
from agent_memory.db.migrations import DIMENSION_PLACEHOLDER, ensure_migrated, load_migrations  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402

FIRST_NEW_MIGRATION = 15
LOAD_BATCH = STATEMENT_ROWS * STATEMENTS_PER_QUERY
BATCH = 5000
# The old design's sweep statements (before migration 0015), verbatim.
OLD_DECAY = (
    'RETURN array::len((UPDATE (SELECT VALUE id FROM type::table($table) WHERE memory_category = $cat '
    'AND decay_day != $day LIMIT $batch) '
    'SET importance = math::max([0.0, math::min([2.0, importance * $factor])]), decay_day = $day RETURN VALUE 1));'
)
OLD_EXPIRE = (
    'RETURN array::len((UPDATE (SELECT VALUE id FROM type::table($table) WHERE memory_category = "context" '
    'AND created_at < $cutoff AND valid_until IS NONE LIMIT $batch) SET valid_until = $now RETURN VALUE 1));'
)
OLD_PURGE = (  # before 69dcb25: re-selects from the start of the table each batch and returns every deleted row
    'RETURN array::len((DELETE (SELECT VALUE id FROM type::table($table) WHERE created_at < $cutoff LIMIT $batch) RETURN BEFORE));'
)
FACTORS = {'context': 0.95, 'knowledge': 0.995}
# Retrieval traces without query_embedding (a 384-float vector per row would make the load, not the purge, the cost):
# the first `due` rows are 40 days old (past a 30-day window), a millisecond apart; the rest an hour old.


def rows(start: int, stop: int, n: int, now: dt.datetime, base_field: str, crossing_share: float = 0.01,
         vectors: bool = False) -> list[dict[str, Any]]:  # fmt: skip
    """``vectors``: each row carries an embedding, as production attributes do (bench/vector_types.py)."""
    crossing = max(1, int(n * crossing_share))
    out = []
    for i in range(start, stop):
        category = ('context', 'knowledge', 'identity')[i % 3]
        created, until = now - dt.timedelta(hours=1), None
        if category == 'context':
            j = i // 3
            if j < crossing:
                created = now - dt.timedelta(days=7, minutes=30)
            elif j % 2 == 0:
                created, until = now - dt.timedelta(days=30), now - dt.timedelta(days=23)
        out.append({
            'id': RecordID('attribute', f'{i:012d}'), 'entity': RecordID('entity', ['person', f'p{i % 8}']),
            'key': f'k{i % 50}', 'value': f'v{i}', 'memory_category': category,
            base_field: round({'context': 0.5, 'knowledge': 0.8, 'identity': 1.0}[category] * (0.5 + (i % 101) / 100), 6),
            'confidence': 0.9, 'source': {'kind': 'bench'}, 'valid_from': created, 'valid_until': until,
            'created_at': created, 'confirmed_at': created, 'scope_sets': [['/']],
        } | ({'embedding': unit_vector(i)} if vectors else {}))  # fmt: skip
    return out


def people(now: dt.datetime) -> list[dict[str, Any]]:
    """The entities ``rows`` refers to (``person/p0`` … ``person/p7``)."""
    return [
        {'id': RecordID('entity', ['person', f'p{k}']), 'name': f'P{k}', 'type': 'person', 'memory_category': 'identity',
         'importance_base': 1.0, 'scope_sets': [['/']], 'created_at': now, 'updated_at': now, 'embedding': unit_vector(10**9 + k)}
        for k in range(8)
    ]  # fmt: skip


def old_schema(db: Database, name: str) -> None:
    """Migrations 1-6 only: the schema the old design ran on."""
    dimension = str(get_settings().embedding_dimension)
    for migration in load_migrations('context'):
        if migration.version < FIRST_NEW_MIGRATION:
            db.query(name, migration.sql.replace(DIMENSION_PLACEHOLDER, dimension))


def lean(db: Database, name: str) -> None:
    """Drop the attribute indexes no sweep reads (full-text, HNSW, address/entity lookups): loading costs ~half the CPU
    per row (bench/insert_rates.py). Expiry's UPDATE then maintains fewer indexes than in production (its rows' value
    and search text do not change, so the full-text indexes would have no new terms to write)."""
    sweeps_read = {'attribute_category_created', 'attribute_created', 'attribute_expiry_from'}
    for index in db.query(name, 'INFO FOR TABLE attribute;')[-1]['indexes']:
        if index not in sweeps_read:
            db.query(name, f'REMOVE INDEX {index} ON attribute;')


def load(db: Database, name: str, n: int, now: dt.datetime, base_field: str, crossing_share: float = 0.01,
         vectors: bool = False) -> float:  # fmt: skip
    """Bench rows in `insert_sql` queries (small INSERT statements: a large one costs more per row)."""
    started, cpu, last = time.perf_counter(), time.process_time(), time.perf_counter()
    if vectors:  # the facts' people, each with an embedding as production entities have (a fact's writes read its name)
        db.query(name, *insert_sql('entity', people(now)))
    for start in range(0, n, LOAD_BATCH):
        batch = rows(start, min(n, start + LOAD_BATCH), n, now, base_field, crossing_share, vectors)
        db.query(name, *insert_sql('attribute', batch))
        if time.perf_counter() - last > 60:
            last = time.perf_counter()
            print(f'    {name}: {start + len(batch):,}/{n:,} rows, {rate(start + len(batch), started, cpu)}', file=sys.stderr, flush=True)
    print(f'    {name}: loaded {n:,} facts, {rate(n, started, cpu)}', file=sys.stderr, flush=True)
    return time.perf_counter() - started


def rate(count: int, started: float, cpu: float) -> str:
    wall = time.perf_counter() - started
    return (f'{count / wall:,.0f} rows/s, {1000 * (time.process_time() - cpu) / max(count, 1):.2f} CPU ms/row, '
            f'load {os.getloadavg()[0]:.1f}')  # fmt: skip


OLD_BUDGET_S = [math.inf]  # --old-budget: the old design's sweeps stop after this many seconds (their count is then short)


def drain(db: Database, name: str, sql: str, **params: Any) -> int:
    total, started = 0, time.perf_counter()
    while True:
        affected = int(db.query(name, sql, {**params, 'batch': BATCH})[-1] or 0)
        total += affected
        if affected < BATCH:
            return total
        if time.perf_counter() - started > OLD_BUDGET_S[0]:
            print(f'    stopped after {OLD_BUDGET_S[0]:.0f} s (--old-budget): {total:,} rows done', file=sys.stderr, flush=True)
            return total


def old_decay(db: Database, name: str) -> int:
    return sum(drain(db, name, OLD_DECAY, table='attribute', cat=cat, factor=f, day='bench-day') for cat, f in FACTORS.items())


def old_expire(db: Database, name: str, now: dt.datetime) -> int:
    return drain(db, name, OLD_EXPIRE, table='attribute', cutoff=now - dt.timedelta(days=7), now=now)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    print(f'    {elapsed:.3f}s -> {result} (load {os.getloadavg()[0]:.1f})', file=sys.stderr, flush=True)
    return result, elapsed


def importance_sum(db: Database, name: str) -> float:
    return float(db.query(name, 'RETURN math::sum(SELECT VALUE importance FROM attribute);')[-1])


def trace_rows(start: int, stop: int, due: int, now: dt.datetime) -> list[dict[str, Any]]:
    old, recent = now - dt.timedelta(days=40), now - dt.timedelta(hours=1)
    return [
        {'id': RecordID('retrieval_trace', i), 'query': f'q{i}', 'mode': 'hybrid', 'tier_entered': 3, 'tier_reason': 'bench',
         'latency_ms': 1.0, 'visibility_fingerprint': 'fp', 'returned': [{'id': 'attribute:x', 'score': 0.5}],
         'created_at': old + dt.timedelta(milliseconds=i) if i < due else recent}
        for i in range(start, stop)
    ]  # fmt: skip


def load_traces(db: Database, name: str, n: int, now: dt.datetime, due: int) -> float:
    started, cpu = time.perf_counter(), time.process_time()
    for start in range(0, n, LOAD_BATCH):
        db.query(name, *insert_sql('retrieval_trace', trace_rows(start, min(n, start + LOAD_BATCH), due, now)))
    print(f'    {name}: loaded {n:,} traces, {rate(n, started, cpu)}', file=sys.stderr, flush=True)
    return time.perf_counter() - started


def old_purge(db: Database, name: str, cutoff: dt.datetime) -> int:
    return drain(db, name, OLD_PURGE, table='retrieval_trace', cutoff=cutoff)


def purge_both(db: Database, old: str, new: str, n: int, due: int, now: dt.datetime, result: dict[str, Any]) -> None:
    """N traces in each database, ``due`` of them past a 30-day window; each design deletes them."""
    for name in (old, new):
        load_traces(db, name, n, now, due)
    cutoff = now - dt.timedelta(days=30)
    result['old_purge'], result['old_purge_s'] = timed(lambda: old_purge(db, old, cutoff))
    result['new_purge'], result['new_purge_s'] = timed(
        lambda: LifecycleStore(db, new, IMPORTANCE).purge_traces({'retrieval_trace': cutoff})
    )
    left = [int(db.query(name, 'RETURN count(SELECT id FROM retrieval_trace);')[-1]) for name in (old, new)]
    assert left == [n - due] * 2, left


def on_mem(n: int, now: dt.datetime, args: argparse.Namespace) -> dict[str, Any]:
    db = Database('mem://', 'bench')
    old, new = f'old_{n}', f'new_{n}'
    old_schema(db, old)
    ensure_migrated(db, new, 'context')
    if args.lean:
        lean(db, old)
        lean(db, new)
    print(f'  mem:// N={n:,}: loading', file=sys.stderr, flush=True)
    load(db, old, n, now, 'importance', args.crossing)
    load(db, new, n, now, 'importance_base', args.crossing)
    store = LifecycleStore(db, new, IMPORTANCE)
    result: dict[str, Any] = {'size': n}
    result['old_decay'], result['old_decay_s'] = timed(lambda: old_decay(db, old))
    result['new_decay'], result['new_decay_s'] = timed(lambda: store.decay(None))
    result['old_expire'], result['old_expire_s'] = timed(lambda: old_expire(db, old, now))
    result['new_expire'], result['new_expire_s'] = timed(lambda: store.expire(now, now - dt.timedelta(days=7)))
    result['sums'] = (importance_sum(db, old), importance_sum(db, new))
    if args.traces:
        purge_both(db, old, new, args.traces, int(args.traces * args.due), now, result)
    db.close()
    return result


def through_route(n: int, now: dt.datetime, directory: str) -> dict[str, Any]:
    """POST /lifecycle/decay and /lifecycle/expire on the default SurrealKV store; the old statements on a copy beside it."""
    from agent_memory.composition import get_services
    from agent_memory.domain.contexts import create_context, mint_context_key

    services = get_services()
    cid = f'b{uuid.uuid4().hex[:12]}'
    create_context(services.control, services.store, cid, {})
    key = mint_context_key(services.control, cid, 'admin', 'bench')
    database = services.store(cid).database
    load(services.db, database, n, now, 'importance_base')
    handler = load_handler('lifecycle')

    def post(sweep: str) -> int:
        event = http_event('POST', f'/api/v1/{cid}/lifecycle/{sweep}', headers={'authorization': f'Bearer {key}'})
        response = handler.lambda_handler(event, LocalContext())
        assert response['statusCode'] == 200, response
        return int(__import__('json').loads(response['body'])['affected'])

    result: dict[str, Any] = {'size': n}
    result['new_decay'], result['new_decay_s'] = timed(lambda: post('decay'))
    result['new_expire'], result['new_expire_s'] = timed(lambda: post('expire'))
    old = f'old_{n}'
    old_schema(services.db, old)
    load(services.db, old, n, now, 'importance')
    result['old_decay'], result['old_decay_s'] = timed(lambda: old_decay(services.db, old))
    result['old_expire'], result['old_expire_s'] = timed(lambda: old_expire(services.db, old, now))
    return result


def report(title: str, results: list[dict[str, Any]]) -> None:
    print(f'\n## {title}\n')
    print('| facts | decay old s | decay new s | expire old s | expire new s | decayed (old/new) | expired (old/new) '
          '| purge old s | purge new s | purged (old/new) |')  # fmt: skip
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in results:
        purge = (f"{r['old_purge_s']:.2f} | {r['new_purge_s']:.3f} | {r['old_purge']:,}/{r['new_purge']:,}" if 'old_purge' in r
                 else '- | - | -')  # fmt: skip
        counts = f'{r["old_decay"]:,}/{r["new_decay"]:,} | {r["old_expire"]:,}/{r["new_expire"]:,}'
        print(f"| {r['size']:,} | {r['old_decay_s']:.2f} | {r['new_decay_s']:.3f} | {r['old_expire_s']:.2f} | "
              f"{r['new_expire_s']:.3f} | {counts} | {purge} |")  # fmt: skip
        if 'sums' in r:
            old_sum, new_sum = r['sums']
            ok = abs(old_sum - new_sum) <= 1e-9 * max(abs(old_sum), 1.0)
            print(f'|  | sum(importance) after one step: old {old_sum:.6f}, new {new_sum:.6f} ({"equal" if ok else "DIFFERENT"}) |||||')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('--sizes', default='10000,100000', help='comma-separated fact counts for mem://')
    parser.add_argument('--route-size', type=int, default=10_000, help='facts for the SurrealKV route run (0 = skip)')
    parser.add_argument('--crossing', type=float, default=0.01, help='share of N newly crossing the 7-day TTL')
    parser.add_argument('--traces', type=int, default=0, help='retrieval traces per database for the purge (0 = N)')
    parser.add_argument('--due', type=float, default=0.1, help='share of the traces past the 30-day window')
    parser.add_argument('--lean', action='store_true', help='only the indexes the sweeps read (see lean())')
    parser.add_argument('--old-budget', type=float, default=math.inf, help='seconds after which an old sweep stops')
    args = parser.parse_args()
    OLD_BUDGET_S[0] = args.old_budget
    now = dt.datetime.now(dt.UTC)
    print(f'# Lifecycle designs, {now:%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; '
          f'{args.crossing:.0%} crossing the TTL{", lean schema" if args.lean else ""}')  # fmt: skip
    sizes = [int(n) for n in args.sizes.split(',')]
    report('mem://', [on_mem(n, now, argparse.Namespace(**{**vars(args), 'traces': args.traces or n})) for n in sizes])
    if args.route_size:
        directory = tempfile.mkdtemp(prefix='am-bench-kv-')
        os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{directory}/surreal'
        get_settings.cache_clear()
        try:
            report('route on SurrealKV (new: POST /lifecycle/…; old: its statements on the same store)',
                   [through_route(args.route_size, now, directory)])  # fmt: skip
        finally:
            shutil.rmtree(directory, ignore_errors=True)


if __name__ == '__main__':
    main()
