"""Extraction throughput: turns through queue → worker → reconcile with stage 0, on embedded SurrealDB.

For each memory size (prior facts already in the context) the same user turns from the labelled corpus
are accepted by the facts handler (202, job queued) and then delivered one by one to the worker Lambda
handler in the SQS event shape. Printed side by side: per-turn worker latency p50/p95, turns/second,
and the ratio to the smallest memory — reconcile cost must not grow linearly with memory size.

Run: ``make bench-extraction`` (or ``PYTHONPATH=shared:infra:. .venv/bin/python bench/extraction.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

from bench_env import CollectingQueue, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports

from agent_memory.composition import get_services  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from agent_memory.models import MAX_TRIPLES  # noqa: E402
from local_runtime.events import LocalContext, http_event, sqs_record  # noqa: E402
from tests.extraction_corpus.scoring import load_corpus  # noqa: E402


def preload(facts_fn: Any, ctx: str, key: str, count: int) -> None:
    """``count`` prior facts over 50 entities, written as triples in batches (not timed)."""
    batch = MAX_TRIPLES
    for start in range(0, count, batch):
        triples = [{'entity': {'type': 'person', 'name': f'colleague {i % 50}'}, 'key': f'fact_{i}', 'value': f'value {i}'}
                   for i in range(start, min(count, start + batch))]  # fmt: skip
        event = http_event('POST', f'/api/v1/{ctx}/facts', headers={'authorization': f'Bearer {key}'},
                           body={'infer': 'triples', 'triples': triples})  # fmt: skip
        assert facts_fn.lambda_handler(event, LocalContext())['statusCode'] == 200
        print(f'  preloaded {min(count, start + batch)}/{count} facts', file=sys.stderr)


def run(size: int, turns: list[str], facts_fn: Any, worker_fn: Any, queue: CollectingQueue) -> list[float]:
    services = get_services()
    ctx = f'benchx{size}t{int(time.time())}'
    create_context(services.control, services.store, ctx, {})
    key = mint_context_key(services.control, ctx, 'admin', 'bench')
    preload(facts_fn, ctx, key, size)
    queue.jobs.clear()
    session = None
    for text in turns:
        body: dict[str, Any] = {'text': text, **({'session_id': session} if session else {})}
        event = http_event('POST', f'/api/v1/{ctx}/facts', headers={'authorization': f'Bearer {key}'}, body=body)
        response = facts_fn.lambda_handler(event, LocalContext())
        assert response['statusCode'] == 202, response
        session = session or __import__('json').loads(response['body'])['sessionId']
    latencies = []
    for n, job in enumerate(queue.jobs, 1):
        record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:bench', int(time.time() * 1000))
        started = time.perf_counter()
        result = worker_fn.lambda_handler({'Records': [record]}, LocalContext())
        latencies.append((time.perf_counter() - started) * 1000)
        assert result == {'batchItemFailures': []}, result
    services.control.delete_context(ctx)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sizes', default='100,1000,10000', help='prior facts in the context')
    parser.add_argument('--turns', type=int, default=150)
    args = parser.parse_args()
    texts = [t.text for s in load_corpus() for t in s.turns if t.role == 'user'][: args.turns]
    services = get_services()
    queue = CollectingQueue()
    services.queue = queue
    facts_fn, worker_fn = load_handler('facts'), load_handler('extraction_worker')
    rows = []
    for size in [int(s) for s in args.sizes.split(',')]:
        print(f'memory size {size}: {len(texts)} turns …', file=sys.stderr)
        latencies = run(size, texts, facts_fn, worker_fn, queue)
        ordered = sorted(latencies)
        rows.append((size, statistics.median(ordered), ordered[int(len(ordered) * 0.95) - 1], 1000 * len(ordered) / sum(ordered)))
    base = rows[0][1]
    print(f'\n{"prior facts":>12} {"p50 ms/turn":>12} {"p95 ms/turn":>12} {"turns/s":>9} {"p50 vs first":>13}')
    for size, p50, p95, rate in rows:
        print(f'{size:>12} {p50:>12.2f} {p95:>12.2f} {rate:>9.1f} {p50 / base:>12.2f}x')


if __name__ == '__main__':
    main()
