"""Lifecycle sweeps, old design beside new in one run (issue 14), on ``mem://`` and through the route on SurrealKV.

Old: decay multiplies and stamps every fact row in 5,000-row batches that re-select from the start;
expiry re-reads every old context row each hour. New (migration 0015): decay bumps the context's decay
clock (importance is computed on read), expiry reads the ``expiry_from`` index of open context rows,
trace purge walks ``created_at`` forward.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/lifecycle_designs.py --sizes 10000,100000

Data per size N: attribute rows, 1/3 each context/knowledge/identity. Of the context rows, half were
expired by earlier sweeps (known 30 days ago, closed 23 days ago), 1 % of N cross the 7-day TTL now,
the rest are an hour old. Both designs get the same rows in their own database; results are checked
against each other (sum of importance after one decay step, rows expired).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from typing import Any

from bench_env import load_handler  # noqa: E402,I001  # first: paths and environment before the service imports

os.environ.setdefault('AGENT_MEMORY_MANAGEMENT_KEY', 'bench-management-key')

from surrealdb import RecordID  # noqa: E402

from agent_memory.composition import IMPORTANCE  # noqa: E402
from agent_memory.config import get_settings  # noqa: E402
from agent_memory.db.connection import Database  # noqa: E402
from agent_memory.db.lifecycle_store import LifecycleStore  # noqa: E402
from agent_memory.db.migrations import DIMENSION_PLACEHOLDER, ensure_migrated, load_migrations  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402

FIRST_NEW_MIGRATION = 15
LOAD_BATCH = 2000
STMT_ROWS = 50
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
TRACE_CHUNK = 250  # rows per in-engine FOR loop: one large FOR statement is superlinear (bench/README.md)
# Retrieval traces made in the engine (no per-row request, no query_embedding: a 384-float vector per row would make
# the load, not the purge, the cost). Traces i < $due are 40 days old (past a 30-day window), the rest an hour old.
TRACE_SEED = """FOR $i IN $start..$stop {
    CREATE type::record('retrieval_trace', $i) CONTENT { query: 'q' + <string>$i, mode: 'hybrid', tier_entered: 3,
        tier_reason: 'bench', latency_ms: 1.0, visibility_fingerprint: 'fp', returned: [{ id: 'attribute:x', score: 0.5 }],
        created_at: IF $i < $due { $old + <duration>(<string>$i + 'ms') } ELSE { $recent } } RETURN NONE;
};"""


def rows(start: int, stop: int, n: int, now: dt.datetime, base_field: str) -> list[dict[str, Any]]:
    crossing = max(1, n // 100)
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
        })  # fmt: skip
    return out


def old_schema(db: Database, name: str) -> None:
    """Migrations 1-6 only: the schema the old design ran on."""
    dimension = str(get_settings().embedding_dimension)
    for migration in load_migrations('context'):
        if migration.version < FIRST_NEW_MIGRATION:
            db.query(name, migration.sql.replace(DIMENSION_PLACEHOLDER, dimension))


def load(db: Database, name: str, n: int, now: dt.datetime, base_field: str) -> float:
    """INSERT statements of STMT_ROWS rows, LOAD_BATCH rows per query (a large INSERT statement is superlinear)."""
    started = time.perf_counter()
    for start in range(0, n, LOAD_BATCH):
        batch = rows(start, min(n, start + LOAD_BATCH), n, now, base_field)
        chunks = [batch[k : k + STMT_ROWS] for k in range(0, len(batch), STMT_ROWS)]
        sql = '\n'.join(f'INSERT INTO attribute $r{j} RETURN NONE;' for j in range(len(chunks)))
        db.query(name, sql, {f'r{j}': chunk for j, chunk in enumerate(chunks)})
    return time.perf_counter() - started


def drain(db: Database, name: str, sql: str, **params: Any) -> int:
    total = 0
    while True:
        affected = int(db.query(name, sql, {**params, 'batch': BATCH})[-1] or 0)
        total += affected
        if affected < BATCH:
            return total


def old_decay(db: Database, name: str) -> int:
    return sum(drain(db, name, OLD_DECAY, table='attribute', cat=cat, factor=f, day='bench-day') for cat, f in FACTORS.items())


def old_expire(db: Database, name: str, now: dt.datetime) -> int:
    return drain(db, name, OLD_EXPIRE, table='attribute', cutoff=now - dt.timedelta(days=7), now=now)


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    result = fn()
    elapsed = time.perf_counter() - started
    print(f'    {elapsed:.2f}s -> {result}', file=sys.stderr, flush=True)
    return result, elapsed


def importance_sum(db: Database, name: str) -> float:
    return float(db.query(name, 'RETURN math::sum(SELECT VALUE importance FROM attribute);')[-1])


def load_traces(db: Database, name: str, n: int, now: dt.datetime) -> float:
    started = time.perf_counter()
    sql = '\n'.join(f'{TRACE_SEED.replace("$start", f"$s{k}").replace("$stop", f"$e{k}")}' for k in range(8))
    for start in range(0, n, 8 * TRACE_CHUNK):
        bounds = {}
        for k in range(8):
            lo = min(n, start + k * TRACE_CHUNK)
            bounds |= {f's{k}': lo, f'e{k}': min(n, lo + TRACE_CHUNK)}
        db.query(name, sql, {**bounds, 'due': n // 10, 'old': now - dt.timedelta(days=40), 'recent': now - dt.timedelta(hours=1)})
    return time.perf_counter() - started


def old_purge(db: Database, name: str, cutoff: dt.datetime) -> int:
    return drain(db, name, OLD_PURGE, table='retrieval_trace', cutoff=cutoff)


def purge_both(db: Database, old: str, new: str, n: int, now: dt.datetime, result: dict[str, Any]) -> None:
    """N traces in each database, 10 % past a 30-day window; each design deletes them."""
    for name in (old, new):
        print(f'    loaded {n:,} traces in {load_traces(db, name, n, now):.1f}s', file=sys.stderr, flush=True)
    cutoff = now - dt.timedelta(days=30)
    result['old_purge'], result['old_purge_s'] = timed(lambda: old_purge(db, old, cutoff))
    result['new_purge'], result['new_purge_s'] = timed(
        lambda: LifecycleStore(db, new, IMPORTANCE).purge_traces({'retrieval_trace': cutoff})
    )
    left = [int(db.query(name, 'RETURN count(SELECT id FROM retrieval_trace);')[-1]) for name in (old, new)]
    assert left == [n - n // 10] * 2, left


def on_mem(n: int, now: dt.datetime) -> dict[str, Any]:
    db = Database('mem://', 'bench')
    old, new = f'old_{n}', f'new_{n}'
    old_schema(db, old)
    ensure_migrated(db, new, 'context')
    print(f'  mem:// N={n:,}: loading', file=sys.stderr, flush=True)
    load(db, old, n, now, 'importance')
    load(db, new, n, now, 'importance_base')
    store = LifecycleStore(db, new, IMPORTANCE)
    result: dict[str, Any] = {'size': n}
    result['old_decay'], result['old_decay_s'] = timed(lambda: old_decay(db, old))
    result['new_decay'], result['new_decay_s'] = timed(lambda: store.decay(None))
    result['old_expire'], result['old_expire_s'] = timed(lambda: old_expire(db, old, now))
    result['new_expire'], result['new_expire_s'] = timed(lambda: store.expire(now, now - dt.timedelta(days=7)))
    result['sums'] = (importance_sum(db, old), importance_sum(db, new))
    purge_both(db, old, new, n, now, result)
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
    args = parser.parse_args()
    now = dt.datetime.now(dt.UTC)
    print(f'# Lifecycle designs, {now:%Y-%m-%d %H:%M} UTC, {platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}')
    report('mem://', [on_mem(int(n), now) for n in args.sizes.split(',')])
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
