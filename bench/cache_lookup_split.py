"""Where the cache lookup's time goes beyond the bare KNN it wraps: N trace pairs loaded as ``bench/cache.py`` part 2
loads them, one HNSW rebuild, then 60 stored questions timed through four statements, twice (the bare KNN; the lookup's
inner KNN subquery with its 7 fields; the filtered lookup without ``response.*``; ``TraceStore.cache_candidates``).

Run: ``PYTHONPATH=shared:infra:.:bench .venv/bin/python bench/cache_lookup_split.py 10000``
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
import uuid
from collections.abc import Callable

import cache  # first: paths and environment before the service imports
import numpy as np
from cache import BARE_KNN, FP_MAIN, TRACE_QUESTIONS, WINDOW_SECONDS, TraceLoader, pct

from agent_memory.clock import utcnow
from agent_memory.composition import get_services
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.contexts import create_context

INNER = (
    'SELECT id, query, question_key, created_at, response, cache_eligible, visibility_fingerprint, '
    'vector::distance::knn() AS distance FROM retrieval_trace WHERE query_embedding <|32,64|> $vector'
)
FILTERED = (
    f'SELECT id, query, question_key, created_at, distance FROM ({INNER}) WHERE distance IS NOT NONE AND distance <= $max_distance '
    'AND cache_eligible = true AND visibility_fingerprint IN $fps AND created_at > $since ORDER BY distance;'
)


def main() -> None:
    size = int(sys.argv[1])
    services = get_services()
    texts = cache.trace_questions.questions(TRACE_QUESTIONS, 20261130)
    vectors = cache.trace_questions.question_vectors(services.embedder, texts)
    cid = f'benchsplit{uuid.uuid4().hex[:6]}'
    create_context(services.control, services.store, cid, {})
    store = services.store(cid)
    now = utcnow()
    since = now - dt.timedelta(seconds=WINDOW_SECONDS)
    loader = TraceLoader(store, texts, vectors, now, 1)
    print(f'load {loader.insert(0, size, "split"):.1f} s @{os.getloadavg()[0]:.1f}', flush=True)
    t0 = time.monotonic()
    services.lifecycle(cid).rebuild_vector_index('retrieval_trace', size, utcnow())
    print(f'rebuild {time.monotonic() - t0:.1f} s @{os.getloadavg()[0]:.1f}', flush=True)
    queries = [loader.set.vectors[int(i)].tolist() for i in np.random.default_rng(0).choice(size, 60, replace=False)]
    traces = TraceStore(store)
    params = {'fps': [FP_MAIN], 'since': since, 'max_distance': 0.08}

    def run(label: str, call: Callable[[list[float]], object]) -> None:
        latencies = []
        for query in queries:
            t0 = time.perf_counter()
            call(query)
            latencies.append((time.perf_counter() - t0) * 1000)
        print(f'{label}: p50 {pct(latencies, 0.5):.1f} p95 {pct(latencies, 0.95):.1f} ms @{os.getloadavg()[0]:.1f}', flush=True)

    for _ in range(2):
        run('bare KNN', lambda v: store.q(BARE_KNN, vector=v))
        run('inner subquery (32 rows, 7 fields)', lambda v: store.q(INNER + ';', vector=v))
        run('filtered, no response.*', lambda v: store.q(FILTERED, vector=v, **params))
        run('cache_candidates', lambda v: traces.cache_candidates(v, [FP_MAIN], since, 0.92, None))


if __name__ == '__main__':
    main()
