"""Does a warm-up right after ``REBUILD INDEX`` spare the first lookups the new graph's reading? (issue 14)

Two contexts get the same N trace pairs (as ``bench/cache.py`` loads them) and their retrieval traces' HNSW index
rebuilt; one is then warmed (``--probes`` KNN statements with ``ef = --probe-ef``, each from a stored row's own vector).
``TraceStore.cache_candidates`` then runs on both, alternating lookup by lookup: Q1 (the first lookups after the
rebuild), then Q2 (as many again, disjoint). Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/cache_rebuild_warmup.py --size 100000``
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
import uuid
from typing import Any

import cache  # noqa: I001  # first: bench_env sets paths and environment before the service imports
import numpy as np
import trace_questions

from agent_memory.clock import utcnow
from agent_memory.composition import get_services
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.contexts import create_context

PROBE = 'SELECT VALUE id FROM retrieval_trace WHERE query_embedding <|10,{ef}|> $vector;'


def trace_corpus(services: Any, seed: int) -> tuple[list[str], np.ndarray[Any, Any], dt.datetime, dt.datetime]:
    """``bench/cache.py``'s trace questions, their vectors, now, and the start of the cache's window."""
    texts = trace_questions.questions(cache.TRACE_QUESTIONS, seed)
    now = utcnow()
    return texts, trace_questions.question_vectors(services.embedder, texts), now, now - dt.timedelta(seconds=cache.WINDOW_SECONDS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=100_000)
    parser.add_argument('--lookups', type=int, default=40, help='lookups in Q1 and in Q2')
    parser.add_argument('--probes', type=int, default=20)
    parser.add_argument('--probe-ef', type=int, default=2000)
    parser.add_argument('--seed', type=int, default=20261202)
    args = parser.parse_args()
    services = get_services()
    texts, vectors, now, since = trace_corpus(services, args.seed)
    contexts = {}
    for label in ('rebuilt', 'rebuilt + warm-up'):
        cid = f'benchwarmup{uuid.uuid4().hex[:6]}'
        create_context(services.control, services.store, cid, {})
        loader = cache.TraceLoader(services.store(cid), texts, vectors, now, args.seed)  # the same rows in both
        load_s = loader.insert(0, args.size, f'{label}: N={args.size:,}')
        started = time.monotonic()
        services.lifecycle(cid).rebuild_vector_index('retrieval_trace', args.size, utcnow())
        print(f'{label}: loaded in {load_s:.0f} s, rebuilt in {time.monotonic() - started:.0f} s')
        contexts[label] = (cid, loader)
    rng = np.random.default_rng(args.seed)
    loader = contexts['rebuilt'][1]
    picked = rng.choice(args.size, 2 * args.lookups + args.probes, replace=False)
    near = [loader.set.vectors[int(i)].astype(np.float64) + rng.normal(0.0, 0.005, 384) for i in picked[: 2 * args.lookups]]
    lookups = [v / np.linalg.norm(v) for v in near]
    cid, _ = contexts['rebuilt + warm-up']
    started = time.monotonic()
    for i in picked[2 * args.lookups :]:
        services.store(cid).q(PROBE.format(ef=args.probe_ef), vector=loader.set.vectors[int(i)].tolist())
    print(f'warm-up: {args.probes} probes at ef {args.probe_ef}: {time.monotonic() - started:.2f} s')
    for name, queries in (('Q1, the first lookups', lookups[: args.lookups]), ('Q2, the next ones', lookups[args.lookups :])):
        timings: dict[str, list[cache.Timing]] = {label: [] for label in contexts}
        for query in queries:  # alternated lookup by lookup
            for label, (cid, data) in contexts.items():
                timings[label].append(
                    cache.time_service(TraceStore(services.store(cid)), [query], since, cache.DEFAULT_THRESHOLD, float('inf'), 1, data.set)
                )
        for label, runs in timings.items():
            ms = [t.p50 for t in runs]
            found = sum(t.found for t in runs)
            print(f'{name:<24} {label:<18} p50 {cache.pct(ms, 0.5):6.1f}  p95 {cache.pct(ms, 0.95):6.1f} ms  found {found}/{len(ms)}')
    for cid, _ in contexts.values():
        services.control.delete_context(cid)
        services.drop_context(cid)


if __name__ == '__main__':
    main()
