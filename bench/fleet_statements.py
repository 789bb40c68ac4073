"""Where a warm ``POST /query`` spends the database's time, statement by statement, per search design of
``bench/fleet.py``, on a throwaway copy of its seeded tenants (embedded SurrealKV, one process, no delay).

For each tenant named: ``--queries`` questions through the retrieval handler with the design's knobs; the first
``--warm`` are the process warming (design (b) reads a 5,000-row tenant in about ten), the rest are measured: handler
wall ms p50, the engine's own time per round trip (the ``time`` SurrealDB reports per statement, summed) and the
statements that cost most per query. Run:

    PYTHONPATH=shared:infra:. .venv/bin/python bench/fleet_statements.py --design a fleet000 fleet020 locomo0
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_env  # noqa: E402,I001  # first: paths and environment before the service imports
from fleet import design  # noqa: E402
from fleet_seed import SCALES, question, seeded  # noqa: E402
from retrieval import facts  # noqa: E402

UNITS = {'ns': 1e-6, 'µs': 1e-3, 'ms': 1.0, 's': 1000.0}


def engine_ms(text: str) -> float:
    found = re.fullmatch(r'([\d.]+)(ns|µs|ms|s)', text)
    return float(found[1]) * UNITS[found[2]] if found else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('tenants', nargs='+')
    parser.add_argument('--scale', default='small', choices=list(SCALES))
    parser.add_argument('--design', default='a', help='a, b, c or c:ROWS (bench/fleet.py)')
    parser.add_argument('--queries', type=int, default=30)
    parser.add_argument('--warm', type=int, default=15)
    args = parser.parse_args()
    source, manifest = seeded(SCALES[args.scale])
    work = Path(tempfile.mkdtemp(prefix='fleet-statements-'))
    shutil.copytree(source / 'db', work / 'db')
    os.environ['AGENT_MEMORY_DB_URL'] = f'surrealkv://{work / "db"}'
    try:
        run(args, {t['id']: t for t in manifest['tenants']})
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(args: argparse.Namespace, tenants: dict[str, dict[str, Any]]) -> None:
    from agent_memory import tuning
    from agent_memory.db import connection
    from local_runtime.events import LocalContext, http_event

    tuning.TUNING = dataclasses.replace(tuning.TUNING, **design(args.design, 500)[1])
    trips: list[list[tuple[float, str]]] = []
    opened = connection.Database._connection

    def recording(self: Any) -> Any:
        conn = opened(self)
        if not getattr(conn, 'recorded', False):
            raw = conn.query_raw

            def query_raw(text: str, params: dict[str, Any]) -> Any:
                result = raw(text, params)
                statements = text.split(';\n')
                results = result.get('result', [])
                aligned = len(results) == len(statements)  # else a statement's text held ';\n': name it by place
                trips.append([
                    (engine_ms(s.get('time', '0ns')),
                     statements[i][:100].replace('\n', ' ') if aligned else f'(round trip {len(trips) + 1}, statement {i + 1})')
                    for i, s in enumerate(results)
                ])  # fmt: skip
                return result

            conn.query_raw, conn.recorded = query_raw, True
        return conn

    connection.Database._connection = recording  # type: ignore[method-assign]
    handler = bench_env.load_handler('retrieval')
    print(f'design ({args.design}) {design(args.design, 500)[0]}; load average {os.getloadavg()[0]:.1f}')
    for ctx in args.tenants:
        tenant = tenants[ctx]
        rows = facts(tenant['size']) if tenant['kind'] == 'synthetic' else None
        walls: list[float] = []
        per_trip: dict[int, list[float]] = defaultdict(list)
        per_statement: dict[str, float] = defaultdict(float)
        for i in range(args.queries):
            trips.clear()
            text = question(rows, (i * 37) % tenant['size']) if rows else tenant['questions'][i]['text']
            event = http_event('POST', f'/api/v1/{ctx}/query', headers={'authorization': f'Bearer {tenant["key"]}'},
                               body={'query': text, 'k': 10})  # fmt: skip
            began = time.perf_counter()
            handler.lambda_handler(event, LocalContext())
            if i < args.warm:
                continue
            walls.append((time.perf_counter() - began) * 1000)
            for n, trip in enumerate(trips):
                per_trip[n].append(sum(ms for ms, _ in trip))
                for ms, statement in trip:
                    per_statement[statement] += ms
        measured = args.queries - args.warm
        engine = ', '.join(f'{statistics.median(v):.1f}' for v in per_trip.values())
        print(f'{ctx} ({tenant["size"]:,} rows): wall p50 {statistics.median(walls):.0f} ms; engine ms per round trip (median): {engine}')
        for statement, ms in sorted(per_statement.items(), key=lambda kv: -kv[1])[:6]:
            print(f'  {ms / measured:6.1f} ms a query  {statement}')


if __name__ == '__main__':
    main()
