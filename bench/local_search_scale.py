"""`POST /query` on bench/retrieval.py's synthetic facts (10k by default) with the lists ranked by the database or in the
process (vectors; vectors and texts), the designs alternated question by question in one process on one context.

The context is loaded as ``bench/retrieval.py`` loads it (cached MiniLM vectors, then the HNSW rebuild). The process
first reads the table (``local_vectors_load_rows`` rows per query; those warm-up queries are timed apart), then each
question runs in every design, the design that goes first rotating. Prints wall and CPU ms per query (p50 / p95) and
hit@1 / hit@10 per design and mode, and the engine's store. The default store is ``mem://``; the service's local
default is SurrealKV:
``AGENT_MEMORY_DB_URL=surrealkv:///tmp/bench-kv PYTHONPATH=shared:infra:. .venv/bin/python bench/local_search_scale.py``.
A SurrealKV context of 100k facts takes ~6 minutes to load: ``--keep ctx.json`` keeps it, ``--reuse ctx.json`` runs on
it again (same store URL and ``--size``).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import time
from typing import Any

import retrieval  # noqa: I001  # first: bench_env sets paths and environment before the service imports
from designs import searched_here

from agent_memory import tuning
from agent_memory.db.local_vectors import local_vectors_of
from local_runtime.events import LocalContext, http_event

DESIGNS: dict[str, dict[str, Any]] = {
    'database': {'local_vectors_max_rows': 0, 'local_text_max_rows': 0},
    'vectors here': {'local_vectors_max_rows': 200_000, 'local_vectors_budget_rows': 400_000, 'local_text': False},
    'vectors + text here': {'local_vectors_max_rows': 200_000, 'local_vectors_budget_rows': 400_000, 'local_text': True},
    # texts ranked here, every KNN in the database (``searched_here``)
    'text here': {'local_vectors_max_rows': 200_000, 'local_text_max_rows': 200_000, 'local_vectors_budget_rows': 400_000},
    # the default limits: a table over local_vectors_max_rows holds its texts only (``searched_here``)
    'as shipped': {'local_vectors_max_rows': 200_000, 'local_text_max_rows': 200_000, 'local_vectors_budget_rows': 400_000},
    # tables of over 10,000 rows hold their texts only (``searched_here``)
    'vectors up to 10k here': {
        'local_vectors_max_rows': 200_000, 'local_text_max_rows': 200_000, 'local_vectors_budget_rows': 400_000,
    },
    # ... with the entities' lists in the database, as before migration 0022
    'entities in the database': {
        'local_vectors_max_rows': 200_000, 'local_text_max_rows': 200_000, 'local_vectors_budget_rows': 400_000,
    },
}  # fmt: skip
TEXTS_ONLY = {'text here'}


def rss_mb() -> float:
    with open('/proc/self/status') as status:
        return next(int(line.split()[1]) for line in status if line.startswith('VmRSS')) / 1024


def ask(fn: Any, ctx: str, key: str, question: str, mode: str) -> tuple[float, float, list[str]]:
    event = http_event('POST', f'/api/v1/{ctx}/query', headers={'authorization': f'Bearer {key}'},
                       body={'query': question, 'k': 10, 'mode': mode})  # fmt: skip
    started, cpu = time.perf_counter(), time.process_time()
    response = fn.lambda_handler(event, LocalContext())
    wall, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu) * 1000
    assert response['statusCode'] == 200, response
    return wall, cpu_ms, [h['text'] for h in json.loads(response['body'])['hits']]


def load_context(services: Any, size: int) -> tuple[str, str, float]:
    """A new context of ``size`` synthetic facts (cached vectors), its HNSW indexes rebuilt: (context, key, load s)."""
    rows = retrieval.facts(size)
    names = sorted({n for n, _, _ in rows})
    vectors, by_name = retrieval.corpus_vectors(services, size)
    name_vectors = retrieval.np.asarray([by_name[n] for n in names], dtype=retrieval.np.float32)
    ctx, key = retrieval.new_context(services, size)
    load_s = retrieval.load_rows(services, ctx, rows, vectors, names, name_vectors)
    lifecycle = services.lifecycle(ctx)
    for table, (count, _) in lifecycle.vector_index_growth().items():
        if count:
            lifecycle.rebuild_vector_index(table, count, dt.datetime.now(dt.UTC))
    return ctx, key, load_s


def open_context(services: Any, size: int, reuse: str | None) -> tuple[str, str, float]:
    """The context kept in ``reuse`` (a ``--keep`` file), else a new one loaded now: (context, key, load s)."""
    if not reuse:
        return load_context(services, size)
    with open(reuse) as kept:
        reused = json.load(kept)
    assert reused['size'] == size, reused
    return reused['context'], reused['key'], 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=10_000)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--modes', default='hybrid,bm25')
    parser.add_argument('--designs', default=','.join(DESIGNS))
    parser.add_argument('--warm', default='vectors + text here', help='the design whose knobs read the table (text here: texts only)')
    parser.add_argument('--reuse', help='a JSON file {"context", "key", "size"} of a context this bench loaded and kept (--keep)')
    parser.add_argument('--keep', help='keep the context and write its JSON file here')
    args = parser.parse_args()
    services = retrieval.get_services()
    services.embedder.warm()
    fn = retrieval.load_handler('retrieval')
    questions = retrieval.asked(retrieval.facts(args.size), args.size)
    ctx, key, load_s = open_context(services, args.size, args.reuse)
    if args.keep:
        with open(args.keep, 'w') as kept:
            json.dump({'context': ctx, 'key': key, 'size': args.size}, kept)
    base = tuning.TUNING
    tuning.TUNING = dataclasses.replace(base, **DESIGNS['database'])
    ask(fn, ctx, key, 'warm up', 'hybrid')  # the process's first query
    warm_knobs = {**DESIGNS[args.warm], **({'local_vectors_max_rows': 0} if args.warm in TEXTS_ONLY else {})}
    tuning.TUNING = dataclasses.replace(base, **warm_knobs)
    warm, started, rss_before = 0, time.perf_counter(), rss_mb()
    held = local_vectors_of(services.store(ctx), 384)
    while held.sizes().get('attribute', 0) < args.size and warm < 1000:
        ask(fn, ctx, key, questions[warm % len(questions)][0], 'hybrid')
        warm += 1
    warm_s, rss_after = time.perf_counter() - started, rss_mb()
    designs = args.designs.split(',')
    modes = args.modes.split(',')
    wall: dict[tuple[str, str], list[float]] = {}
    cpu: dict[tuple[str, str], list[float]] = {}
    hit1: dict[tuple[str, str], int] = {}
    hit10: dict[tuple[str, str], int] = {}
    names_ = designs
    for round_ in range(args.rounds):
        for i, (question, expected) in enumerate(questions):
            for mode in modes:
                for design in names_[(i + round_) % len(names_) :] + names_[: (i + round_) % len(names_)]:
                    tuning.TUNING = dataclasses.replace(base, **DESIGNS[design])
                    with searched_here(design):
                        ms, cpu_ms, hits = ask(fn, ctx, key, question, mode)
                    wall.setdefault((design, mode), []).append(ms)
                    cpu.setdefault((design, mode), []).append(cpu_ms)
                    hit1[(design, mode)] = hit1.get((design, mode), 0) + (bool(hits) and hits[0] == expected)
                    hit10[(design, mode)] = hit10.get((design, mode), 0) + (expected in hits)
    tuning.TUNING = base
    n = args.rounds * len(questions)
    store = os.environ.get('AGENT_MEMORY_DB_URL', 'mem://').split('://')[0]
    print(f'{args.size:,} facts on {store}: loaded in {load_s:.1f} s; the process read them ({args.warm}) in {warm} queries, '
          f'{warm_s:.1f} s; RSS {rss_before:.0f} -> {rss_after:.0f} MB (held: {held.weights()})')  # fmt: skip
    print(f'{len(questions)} questions x {args.rounds} rounds, designs alternated; load average {os.getloadavg()[0]:.1f}')
    print(f'{"mode":<7} {"design":<20} {"wall p50":>9} {"wall p95":>9} {"cpu p50":>8} {"cpu p95":>8} {"hit@1":>6} {"hit@10":>7}')
    for mode in modes:
        for design in designs:
            w, c = wall[(design, mode)], cpu[(design, mode)]
            print(f'{mode:<7} {design:<20} {retrieval.pct(w, 50):>9.1f} {retrieval.pct(w, 95):>9.1f} {retrieval.pct(c, 50):>8.1f} '
                  f'{retrieval.pct(c, 95):>8.1f} {hit1[(design, mode)] / n:>6.2f} {hit10[(design, mode)] / n:>7.2f}')  # fmt: skip
    if not (args.reuse or args.keep):
        services.control.delete_context(ctx)
        services.drop_context(ctx)


if __name__ == '__main__':
    main()
