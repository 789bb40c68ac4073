"""Is the slow first minute of cache lookups after ``REBUILD INDEX`` the engine's own work after the statement returned?
(issue 14; ``bench/cache_rebuild_warmup.py`` showed ~40 slow lookups, ~2 s, whether they were lookups or probes)

One context gets N trace pairs (as ``bench/cache.py`` loads them). Its retrieval traces' HNSW index is rebuilt and
``TraceStore.cache_candidates`` runs ``--lookups`` times at once (A). The index is rebuilt again, the process then does
nothing for ``--idle`` seconds while its CPU time is sampled each second (the embedded engine's threads are the
process's), and the same number of other lookups run (B). CPU used while nothing was asked is work the engine does on
its own after ``REBUILD`` returned. Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/cache_rebuild_idle.py --size 100000``
"""

from __future__ import annotations

import argparse
import time
import uuid

import cache  # noqa: I001  # first: bench_env sets paths and environment before the service imports
import numpy as np
from cache_rebuild_warmup import trace_corpus

from agent_memory.clock import utcnow
from agent_memory.composition import get_services
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.contexts import create_context


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=100_000)
    parser.add_argument('--lookups', type=int, default=40)
    parser.add_argument('--idle', type=int, default=10, help='seconds without a query after the second rebuild')
    parser.add_argument('--seed', type=int, default=20261202)
    args = parser.parse_args()
    services = get_services()
    texts, vectors, now, since = trace_corpus(services, args.seed)
    cid = f'benchidle{uuid.uuid4().hex[:6]}'
    create_context(services.control, services.store, cid, {})
    loader = cache.TraceLoader(services.store(cid), texts, vectors, now, args.seed)
    load_s = loader.insert(0, args.size, f'N={args.size:,}')
    rng = np.random.default_rng(args.seed)
    picked = rng.choice(args.size, 2 * args.lookups, replace=False)
    near = [loader.set.vectors[int(i)].astype(np.float64) + rng.normal(0.0, 0.005, 384) for i in picked]
    lookups = [v / np.linalg.norm(v) for v in near]
    traces, lifecycle = TraceStore(services.store(cid)), services.lifecycle(cid)

    def rebuild() -> tuple[float, float]:
        started, cpu = time.monotonic(), time.process_time()
        lifecycle.rebuild_vector_index('retrieval_trace', args.size, utcnow())
        return time.monotonic() - started, time.process_time() - cpu

    def timed(queries: list[np.ndarray]) -> list[float]:
        return [cache.time_service(traces, [q], since, cache.DEFAULT_THRESHOLD, float('inf'), 1, loader.set).p50 for q in queries]

    print(f'N={args.size:,} trace pairs loaded in {load_s:.0f} s')
    wall, cpu = rebuild()
    print(f'rebuild 1: {wall:.0f} s wall, {cpu:.0f} s CPU')
    first = timed(lookups[: args.lookups])
    wall, cpu = rebuild()
    print(f'rebuild 2: {wall:.0f} s wall, {cpu:.0f} s CPU')
    idle = []
    for _ in range(args.idle):
        cpu, started = time.process_time(), time.monotonic()
        time.sleep(1.0)
        idle.append((time.process_time() - cpu) / (time.monotonic() - started))
    second = timed(lookups[args.lookups :])
    print(f'CPU while idle after rebuild 2, per second (1.0 = one core busy): {" ".join(f"{c:.2f}" for c in idle)}')
    for label, ms in ((f'A: {args.lookups} lookups right after rebuild 1', first), (f'B: after {args.idle} s idle', second)):
        q = max(1, len(ms) // 4)
        print(f'{label:<36} p50 {cache.pct(ms, 0.5):6.1f}  p95 {cache.pct(ms, 0.95):6.1f} ms; '
              f'first {q}: p50 {cache.pct(ms[:q], 0.5):6.1f}, last {q}: p50 {cache.pct(ms[-q:], 0.5):6.1f}')  # fmt: skip
    services.control.delete_context(cid)
    services.drop_context(cid)


if __name__ == '__main__':
    main()
