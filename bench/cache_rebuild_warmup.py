"""Does a warm-up right after ``REBUILD INDEX`` spare the first lookups the new graph's reading? (issue 14)

Loads N trace pairs as ``bench/cache.py`` does, rebuilds the retrieval traces' HNSW index, then times
``TraceStore.cache_candidates`` on three disjoint sets of lookups, one after the other: Q1 on the cold graph, Q2 after
Q1 (what other lookups warm on their own), then a warm-up (``--probes`` KNN statements with ``ef = --probe-ef``, each
from a stored row's own vector), then Q3. Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/cache_rebuild_warmup.py --size 100000``
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
import uuid

import cache  # noqa: I001  # first: bench_env sets paths and environment before the service imports
import numpy as np
import trace_questions

from agent_memory.clock import utcnow
from agent_memory.composition import get_services
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.contexts import create_context

PROBE = 'SELECT VALUE id FROM retrieval_trace WHERE query_embedding <|10,{ef}|> $vector;'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=100_000)
    parser.add_argument('--lookups', type=int, default=40, help='lookups in each of Q1, Q2, Q3')
    parser.add_argument('--probes', type=int, default=20)
    parser.add_argument('--probe-ef', type=int, default=2000)
    parser.add_argument('--seed', type=int, default=20261202)
    args = parser.parse_args()
    services = get_services()
    texts = trace_questions.questions(cache.TRACE_QUESTIONS, args.seed)
    vectors = trace_questions.question_vectors(services.embedder, texts)
    cid = f'benchwarmup{uuid.uuid4().hex[:6]}'
    create_context(services.control, services.store, cid, {})
    store, now = services.store(cid), utcnow()
    since = now - dt.timedelta(seconds=cache.WINDOW_SECONDS)
    loader = cache.TraceLoader(store, texts, vectors, now, args.seed)
    load_s = loader.insert(0, args.size, f'N={args.size:,}')
    started = time.monotonic()
    services.lifecycle(cid).rebuild_vector_index('retrieval_trace', args.size, utcnow())
    rebuild_s = time.monotonic() - started
    rng = np.random.default_rng(args.seed)
    picked = rng.choice(args.size, 3 * args.lookups + args.probes, replace=False)
    near = [loader.set.vectors[int(i)].astype(np.float64) + rng.normal(0.0, 0.005, 384) for i in picked]
    lookups = [v / np.linalg.norm(v) for v in near]
    sets = [lookups[n * args.lookups : (n + 1) * args.lookups] for n in range(3)]
    probes = [loader.set.vectors[int(i)].tolist() for i in picked[3 * args.lookups :]]
    traces = TraceStore(store)

    def timed(queries: list[np.ndarray]) -> cache.Timing:
        return cache.time_service(traces, queries, since, cache.DEFAULT_THRESHOLD, float('inf'), len(queries), loader.set)

    first, second = timed(sets[0]), timed(sets[1])
    started = time.monotonic()
    for probe in probes:
        store.q(PROBE.format(ef=args.probe_ef), vector=probe)
    warm_s = time.monotonic() - started
    third = timed(sets[2])
    print(f'{args.size:,} traces: loaded in {load_s:.0f} s, rebuilt in {rebuild_s:.0f} s; {args.lookups} lookups a set')
    print(f'Q1, the cold graph:            p50 {first.p50:6.1f}  p95 {first.p95:6.1f} ms')
    print(f'Q2, after Q1:                  p50 {second.p50:6.1f}  p95 {second.p95:6.1f} ms')
    print(f'warm-up: {args.probes} probes at ef {args.probe_ef}: {warm_s:.2f} s')
    print(f'Q3, after the warm-up:         p50 {third.p50:6.1f}  p95 {third.p95:6.1f} ms')
    print(f'found / exact had one: Q1 {first.found}/{first.exact_found}, Q2 {second.found}/{second.exact_found}, '
          f'Q3 {third.found}/{third.exact_found}')  # fmt: skip
    services.control.delete_context(cid)
    services.drop_context(cid)


if __name__ == '__main__':
    main()
