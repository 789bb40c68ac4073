"""Ingest throughput (issue 14): turns through ``POST /facts/batch`` and through the extraction worker.

Real handlers in process on an embedded SurrealDB, the local MiniLM embeddings, stage 0 extraction (no LLM
stage: the worker's own cost). The user turns of the labelled extraction corpus are sent in batches of
``--batch`` messages:

* ``infer: none``: the batch is stored and its chunks embedded in the request (one transaction);
* ``infer: full``: the batch is stored and one extraction job queued (``extract: whole_conversation``);
  each job is then delivered to the worker handler in the SQS event shape, which extracts (stage 0),
  reconciles, embeds the turn's chunks and the new entities/attributes, and commits, turn by turn.

The worker's time is split by wrapping the real methods (the wrappers call through): extraction =
``Extractors.run``; embedding = time inside the loaded embedding model; reconcile = ``Reconciler.run``;
commit = ``MemoryStore.apply`` minus the model time inside it; reads = the rest (the job's context,
turn and principal reads, the extraction context, the handler). Each path and phase also reports process CPU
(``time.process_time``: every thread of the process, so the embedded engine's and onnxruntime's too), which moves
far less than wall time on a loaded machine; and the worker's database round trips. ``--model-floor`` times the
embedding model alone at batch sizes 1/8/32/64. Nothing here asserts on timings. The machine's load average is
printed with the results.

Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/ingest.py`` (about a minute per vector type on 2 idle vCPUs).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time
import uuid
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from bench_env import CollectingQueue, load_handler  # noqa: E402,I001  # first: paths and environment before the service imports

from agent_memory.composition import get_services  # noqa: E402
from agent_memory.db.connection import Database  # noqa: E402
from agent_memory.db.memory_store import MemoryStore  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from agent_memory.domain.extraction_pipeline import Extractors  # noqa: E402
from agent_memory.domain.reconcile import Reconciler  # noqa: E402
from local_runtime.events import LocalContext, http_event, sqs_record  # noqa: E402
from tests.extraction_corpus.scoring import load_corpus  # noqa: E402

PHASES = ('extraction', 'embedding', 'reconcile', 'commit', 'reads')


class Clock:
    """Seconds spent inside wrapped callables, by phase; the model's calls and texts are counted too."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)  # process CPU (every thread: the engine's and the model's too)
        self.model_calls = 0
        self.model_texts = 0
        self.applying = False  # inside MemoryStore.apply: its model time is embedding, not commit
        self.round_trips = 0

    def wrap(self, phase: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[phase] += time.perf_counter() - t0
                self.cpu[phase] += time.process_time() - c0

        return timed

    def reset(self) -> None:
        self.seconds.clear()
        self.cpu.clear()
        self.model_calls = self.model_texts = self.round_trips = 0


def instrument(clock: Clock) -> None:
    model = get_services().embedder.warm()
    embed = clock.wrap('embedding', model.embed)

    def counted(texts: Any) -> Any:
        clock.model_calls += 1
        clock.model_texts += len(texts)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            return embed(texts)
        finally:
            if clock.applying:
                clock.seconds['embedding inside apply'] += time.perf_counter() - t0
                clock.cpu['embedding inside apply'] += time.process_time() - c0

    apply = clock.wrap('apply', MemoryStore.apply)

    def applying(*args: Any, **kwargs: Any) -> Any:
        clock.applying = True
        try:
            return apply(*args, **kwargs)
        finally:
            clock.applying = False

    query = Database.query

    def counted_query(*args: Any, **kwargs: Any) -> Any:
        clock.round_trips += 1
        return query(*args, **kwargs)

    model.embed = counted  # type: ignore[method-assign]
    Database.query = counted_query  # type: ignore[method-assign]
    Extractors.run = clock.wrap('extraction', Extractors.run)  # type: ignore[method-assign]
    Reconciler.run = clock.wrap('reconcile', Reconciler.run)  # type: ignore[method-assign]
    MemoryStore.apply = applying  # type: ignore[method-assign]


def forget_vectors() -> None:
    """Each path starts with no remembered vectors (both send the same texts; a warm process would be unfair)."""
    get_services().embedder._memo.clear()


def call(function: Any, event: dict[str, Any]) -> dict[str, Any]:
    with contextlib.redirect_stdout(io.StringIO()):  # powertools' metrics blobs
        result: dict[str, Any] = function.lambda_handler(event, LocalContext())
    return result


def batches(texts: list[str], size: int) -> list[list[str]]:
    return [texts[i : i + size] for i in range(0, len(texts), size)]


def post_batches(facts_fn: Any, ctx: str, key: str, texts: list[str], size: int, infer: str) -> float:
    started = time.perf_counter()
    for chunk in batches(texts, size):
        body = {'messages': [{'role': 'user', 'content': t} for t in chunk], 'infer': infer}
        event = http_event('POST', f'/api/v1/{ctx}/facts/batch', headers={'authorization': f'Bearer {key}'}, body=body)
        response = call(facts_fn, event)
        assert response['statusCode'] in (200, 202), response
    return time.perf_counter() - started


def split(spent: dict[str, float], total: float) -> dict[str, float]:
    """The phases of ``spent``: commit is the apply minus the model inside it; reads are what no wrapper timed."""
    phases = dict(spent)
    phases['commit'] = phases.pop('apply', 0.0) - phases.pop('embedding inside apply', 0.0)
    phases['reads'] = total - sum(phases.get(p, 0.0) for p in PHASES if p != 'reads')
    return phases


def run(args: argparse.Namespace, texts: list[str], clock: Clock) -> dict[str, Any]:
    services = get_services()
    queue = CollectingQueue()
    services.queue = queue
    facts_fn, worker_fn = load_handler('facts'), load_handler('extraction_worker')
    result: dict[str, Any] = {}
    for infer in ('none', 'full'):
        ctx = f'benchingest{uuid.uuid4().hex[:10]}'
        create_context(services.control, services.store, ctx, {})
        key = mint_context_key(services.control, ctx, 'admin', 'bench')
        clock.reset()
        forget_vectors()
        cpu = time.process_time()
        accept_s = post_batches(facts_fn, ctx, key, texts, args.batch, infer)
        result[f'accept_{infer}'] = (accept_s, time.process_time() - cpu, clock.model_calls, clock.model_texts)
        if infer == 'full':
            clock.reset()
            cpu = time.process_time()
            started = time.perf_counter()
            for n, job in enumerate(queue.jobs, 1):
                record = sqs_record(f'm{n}', job.to_json(), f'r{n}', 1, 'arn:aws:sqs:local:0:bench', int(time.time() * 1000))
                assert call(worker_fn, {'Records': [record]}) == {'batchItemFailures': []}
            worker_s = time.perf_counter() - started
            worker_cpu = time.process_time() - cpu
            seconds, cpus = split(clock.seconds, worker_s), split(clock.cpu, worker_cpu)
            model = (clock.model_calls, clock.model_texts)
            result['worker'] = (worker_s, worker_cpu, seconds, cpus, *model, len(queue.jobs), clock.round_trips)
            counts = (
                'RETURN [(SELECT count() FROM attribute GROUP ALL)[0].count ?? 0, '
                '(SELECT count() FROM memory_chunk WHERE embedding IS NONE GROUP ALL)[0].count ?? 0];'
            )
            facts = services.store(ctx).q(counts)[0]
            result['rows'] = facts
        queue.jobs.clear()
        services.control.delete_context(ctx)
        services.drop_context(ctx)
    return result


def model_floor(texts: list[str]) -> list[str]:
    """The embedding model alone on this box: texts/s at each batch size, on the same corpus texts."""
    model = get_services().embedder.warm()
    lines = ['| model batch size | texts/s | ms per text | CPU ms per text | load (1 min) |', '|---|---|---|---|---|']
    for size in (1, 8, 32, 64):
        sample = texts[:192]
        started, cpu = time.perf_counter(), time.process_time()
        for chunk in batches(sample, size):
            model.embed(chunk)
        wall, used = time.perf_counter() - started, time.process_time() - cpu
        lines.append(f'| {size} | {len(sample) / wall:.0f} | {1000 * wall / len(sample):.2f} | {1000 * used / len(sample):.2f} | '
                     f'{os.getloadavg()[0]:.1f} |')  # fmt: skip
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--turns', type=int, default=200, help='user turns of the corpus (repeated if it has fewer)')
    parser.add_argument('--batch', type=int, default=25, help='messages per POST /facts/batch (max 100)')
    parser.add_argument('--model-floor', action='store_true', help='also time the embedding model alone at batch sizes 1/8/32/64')
    args = parser.parse_args()
    corpus = [t.text for s in load_corpus() for t in s.turns if t.role == 'user']
    texts = [corpus[i % len(corpus)] + ('' if i < len(corpus) else f' (again, {i // len(corpus)})') for i in range(args.turns)]
    clock = Clock()
    get_services().embedder.warm()
    floor = model_floor(texts) if args.model_floor else []
    instrument(clock)
    load_before = os.getloadavg()
    report(run(args, texts, clock), args, len(texts), load_before[0])
    if floor:
        print('\n'.join(['', *floor]))


def report(r: dict[str, Any], args: argparse.Namespace, n: int, load_before: float) -> None:
    worker_s, worker_cpu, seconds, cpus, calls, model_texts, jobs, round_trips = r['worker']
    lines = [
        f'# Ingest: {n} turns, {args.batch} per POST /facts/batch, {jobs} worker jobs; load average before / after: '
        f'{load_before:.1f} / {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs',
        '',
        '| path | seconds | turns/s | CPU s (process) | turns per CPU s | model calls / texts |',
        '|---|---|---|---|---|---|',
    ]
    for infer, what in (
        ('none', 'POST /facts/batch, infer none (stored + chunks embedded)'),
        ('full', 'POST /facts/batch, infer full (accepted, queued)'),
    ):
        accept_s, accept_cpu, accept_calls, accept_texts = r[f'accept_{infer}']
        lines.append(f'| {what} | {accept_s:.2f} | {n / accept_s:.0f} | {accept_cpu:.2f} | {n / accept_cpu:.0f} | '
                     f'{accept_calls} / {accept_texts} |')  # fmt: skip
    lines.append(f'| worker: stage 0 + reconcile + embeddings + commit | {worker_s:.2f} | {n / worker_s:.0f} | {worker_cpu:.2f} | '
                 f'{n / worker_cpu:.0f} | {calls} / {model_texts} |')  # fmt: skip
    accept_full = r['accept_full'][0]
    lines.append(f'| end to end, infer full (accept + worker) | {accept_full + worker_s:.2f} | {n / (accept_full + worker_s):.0f} | | | |')
    lines += ['', '| worker phase | seconds | ms per turn | share | CPU ms per turn | CPU share |', '|---|---|---|---|---|---|']
    lines += [f'| {p} | {seconds.get(p, 0.0):.2f} | {1000 * seconds.get(p, 0.0) / n:.2f} | {100 * seconds.get(p, 0.0) / worker_s:.0f}% | '
              f'{1000 * cpus.get(p, 0.0) / n:.2f} | {100 * cpus.get(p, 0.0) / worker_cpu:.0f}% |' for p in PHASES]  # fmt: skip
    attributes, unembedded = r['rows']
    lines.append(f'\nWorker round trips to the database: {round_trips} ({round_trips / n:.1f} per turn).')
    lines.append(f'After the worker: {attributes} attribute rows, {unembedded} chunks without an embedding.\n')
    print('\n'.join(lines), flush=True)


if __name__ == '__main__':
    main()
