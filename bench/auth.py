"""Per-request cost of authentication and visibility filtering on a read route (GET /state).

Measured side by side in one run, on embedded SurrealDB (mem://), through the real Lambda handler:
  * key hashing alone: HMAC-SHA256 (what we store) vs PBKDF2-SHA256 at 600k iterations (a "slow hash")
  * GET /state as the admin (grant ``*``) vs a principal holding a 10-clause memory:read grant
  * the same with per-key rate limiting on and off

Run: ``make bench-auth`` (or ``PYTHONPATH=shared:infra .venv/bin/python bench/auth.py``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / 'shared'), str(ROOT / 'infra')]
os.environ.setdefault('AGENT_MEMORY_DB_URL', 'mem://')
os.environ.setdefault('AGENT_MEMORY_KEY_SECRET', 'bench-secret')
os.environ.setdefault('POWERTOOLS_LOG_LEVEL', 'ERROR')
os.environ.setdefault('POWERTOOLS_METRICS_DISABLED', 'true')

from agent_memory.clock import utcnow  # noqa: E402
from agent_memory.composition import get_services  # noqa: E402
from agent_memory.domain.auth import hash_key, mint_token  # noqa: E402
from agent_memory.domain.contexts import create_context  # noqa: E402
from agent_memory.models import MAX_TRIPLES  # noqa: E402
from agent_memory.rows.control import KeyRecord  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1]


def timed(fn: Callable[[], Any], n: int) -> list[float]:
    for _ in range(min(20, n)):
        fn()  # warm-up
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--requests', type=int, default=500)
    parser.add_argument('--facts', type=int, default=200, help='facts per scope written before measuring')
    args = parser.parse_args()

    services = get_services()
    ctx = f'bench{int(time.time())}'
    create_context(services.control, services.store, ctx, {})
    store = services.store(ctx)
    scopes = [f'org/acme/team{i}' for i in range(10)]
    admin_key = mint_token()
    services.control.put_key(KeyRecord(ctx, 'admin', 'bench', hash_key(admin_key), None, None), utcnow())
    reader = {'display_name': 'Reader', 'kind': 'agent', 'created_at': utcnow(),
              'grants': {'memory:read': [f'{s}/*' for s in scopes]}, 'default_scopes': [[scopes[0]]]}  # fmt: skip
    store.q('CREATE principal:reader CONTENT $row;', row=reader)
    reader_key = mint_token()
    services.control.put_key(KeyRecord(ctx, 'reader', 'bench', hash_key(reader_key), None, None), utcnow())

    spec = importlib.util.spec_from_file_location('views_app', ROOT / 'functions' / 'views' / 'app.py')
    assert spec and spec.loader
    views = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(views)
    facts_spec = importlib.util.spec_from_file_location('facts_app', ROOT / 'functions' / 'facts' / 'app.py')
    assert facts_spec and facts_spec.loader
    facts = importlib.util.module_from_spec(facts_spec)
    facts_spec.loader.exec_module(facts)
    print(f'loading {args.facts} facts into each of {len(scopes) + 1} scopes …', file=sys.stderr)
    for scope in [*scopes, 'other/place']:
        for start in range(0, args.facts, MAX_TRIPLES):
            triples = [{'entity': {'type': 'person', 'name': f'p{i % 20}'}, 'key': f'k{i}', 'value': 'v'}
                       for i in range(start, min(args.facts, start + MAX_TRIPLES))]  # fmt: skip
            event = http_event('POST', f'/api/v1/{ctx}/facts', headers={'authorization': f'Bearer {admin_key}'},
                               body={'infer': 'triples', 'scopes': [[scope]], 'triples': triples})  # fmt: skip
            assert facts.lambda_handler(event, LocalContext())['statusCode'] == 200

    def state(key: str) -> Callable[[], Any]:
        def call() -> Any:
            event = http_event('GET', f'/api/v1/{ctx}/state', headers={'authorization': f'Bearer {key}'}, query={'limit': '20'})
            response = views.lambda_handler(event, LocalContext())
            assert response['statusCode'] == 200, response

        return call

    def me(key: str) -> Callable[[], Any]:
        def call() -> Any:
            event = http_event('GET', f'/api/v1/{ctx}/me', headers={'authorization': f'Bearer {key}'})
            assert views.lambda_handler(event, LocalContext())['statusCode'] == 200

        return call

    rows: list[tuple[str, list[float]]] = []
    rows.append(('hash: HMAC-SHA256 (stored)', timed(lambda: hash_key(admin_key), 5000)))
    rows.append(('hash: PBKDF2-SHA256 600k iters', timed(lambda: hashlib.pbkdf2_hmac('sha256', admin_key.encode(), b'salt', 600_000), 5)))
    unlimited = {'rate_limit': {'enabled': False, 'requests_per_minute': 1_000_000, 'burst': 1_000_000}}
    limited = {'rate_limit': {'enabled': True, 'requests_per_minute': 1_000_000, 'burst': 1_000_000}}
    for label, config in (('rate limit off', unlimited), ('rate limit on', limited)):
        services.db.query('control', 'UPDATE type::record("context", $c) SET config = $cfg;', {'c': ctx, 'cfg': config})
        rows.append((f'GET /me      admin "*"        {label}', timed(me(admin_key), args.requests)))
        rows.append((f'GET /state   admin "*"        {label}', timed(state(admin_key), args.requests)))
        rows.append((f'GET /state   10-clause grant  {label}', timed(state(reader_key), args.requests)))

    print(f'\n{"measurement":48} {"p50 ms":>9} {"p95 ms":>9}   (n)')
    for label, samples in rows:
        p50, p95 = percentiles(samples)
        print(f'{label:48} {p50:9.3f} {p95:9.3f}   ({len(samples)})')
    services.control.delete_context(ctx)


if __name__ == '__main__':
    main()
