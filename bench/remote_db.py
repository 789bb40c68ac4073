"""What a remote database costs per route: database round trips and p50 latency with 0 ms and 2 ms added per frame.

The handlers run in-process against ``ws://`` (tests/support/ws_bridge.py in front of the real embedded engine), exactly as a
warm Lambda talks to a hosted SurrealDB; the bridge counts the RPC frames each request sends and can delay each one.
Targets: reads ≤ 3 round trips, writes ≤ 2.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/remote_db.py [--calls 20] [--delays 0,2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_env  # noqa: E402  (paths and a quiet environment first)

from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

BRIDGE = WsBridge().start()
os.environ.update({'AGENT_MEMORY_DB_URL': BRIDGE.url, 'AGENT_MEMORY_DB_USER': ROOT_USER, 'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD})

from agent_memory.composition import get_services  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402

Call = Callable[[int], dict[str, Any]]


def _route(function: str, method: str, path: str, key: str, body: Callable[[int], Any] | None = None) -> Call:
    handler = bench_env.load_handler(function)

    def call(i: int) -> dict[str, Any]:
        event = http_event(method, path, body=body(i) if body else None, headers={'authorization': f'Bearer {key}'})
        result: dict[str, Any] = handler.lambda_handler(event, LocalContext())
        if result['statusCode'] >= 300:
            raise RuntimeError(f'{method} {path}: {result["statusCode"]} {result.get("body")}')
        return result

    return call


def routes(context_id: str, key: str) -> list[tuple[str, str, Call]]:
    base = f'/api/v1/{context_id}'
    triple: Callable[[int], Any] = lambda i: {  # noqa: E731
        'infer': 'triples',
        'triples': [{'entity': {'type': 'person', 'name': 'Ada'}, 'key': 'plan', 'value': f'plan {i}'}],
    }
    return [  # writes first: the reads then find what they wrote
        (
            'write',
            'POST /facts infer=none',
            _route('facts', 'POST', f'{base}/facts', key, lambda i: {'text': f'note {i}', 'infer': 'none', 'sessionId': 'bench'}),
        ),  # fmt: skip
        ('write', 'POST /facts infer=triples', _route('facts', 'POST', f'{base}/facts', key, triple)),
        ('read', 'GET /me', _route('views', 'GET', f'{base}/me', key)),
        ('read', 'GET /entities/{type}/{name}', _route('entities', 'GET', f'{base}/entities/person/Ada', key)),
        ('read', 'GET /sessions/{id}/turns', _route('sessions', 'GET', f'{base}/sessions/bench/turns', key)),
        ('read', 'GET /state', _route('views', 'GET', f'{base}/state', key)),
        ('read', 'GET /profile', _route('views', 'GET', f'{base}/profile', key)),
        ('read', 'POST /query', _route('retrieval', 'POST', f'{base}/query', key, lambda i: {'query': f'what is the plan {i}?', 'k': 5})),
        ('read', 'POST /context', _route('retrieval', 'POST', f'{base}/context', key, lambda i: {'query': f'plan {i}', 'k': 5})),
    ]


def measure(call: Call, calls: int, start: int) -> tuple[float, float]:
    """Median round trips and median latency (ms) over ``calls`` calls, after two warm-up calls."""
    for i in range(2):
        call(start + i)
    trips, times = [], []
    for i in range(calls):
        before, began = BRIDGE.frames, time.perf_counter()
        call(start + 2 + i)
        times.append((time.perf_counter() - began) * 1000)
        trips.append(BRIDGE.frames - before)
    return statistics.median(trips), statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--calls', type=int, default=20)
    parser.add_argument('--delays', default='0,2', help='milliseconds added to each frame, comma-separated')
    args = parser.parse_args()
    delays = [float(d) for d in args.delays.split(',')]
    services = get_services()
    context_id = f'bench{uuid.uuid4().hex[:8]}'
    create_context(services.control, services.store, context_id, {})
    key = mint_context_key(services.control, context_id, 'admin', 'bench')
    _route('sessions', 'POST', f'/api/v1/{context_id}/sessions', key, lambda i: {'id': 'bench'})(0)
    table = routes(context_id, key)
    results: dict[str, list[tuple[float, float]]] = {name: [] for _, name, _ in table}
    for n, delay in enumerate(delays):
        BRIDGE.delay_seconds = delay / 1000
        for _, name, call in table:
            results[name].append(measure(call, args.calls, start=1000 * n))
    BRIDGE.delay_seconds = 0
    header = ' | '.join(f'p50 ms @ {d:g} ms/frame' for d in delays)
    print(f'| route | kind | round trips | target | {header} |')
    print('|---|---|---|---|' + '---|' * len(delays))
    for kind, name, _ in table:
        trips = results[name][0][0]
        target = 3 if kind == 'read' else 2
        flag = '' if trips <= target else ' (over)'
        latencies = ' | '.join(f'{ms:.1f}' for _, ms in results[name])
        print(f'| {name} | {kind} | {trips:g}{flag} | ≤ {target} | {latencies} |')
    BRIDGE.close()


if __name__ == '__main__':
    main()
