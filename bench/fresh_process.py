"""The first hybrid ``POST /query`` calls of a fresh process at scale: a table new to the process is read a chunk per
query, and until it is whole its lists run in the database. Chunk sizes for a texts-only table (a table over
``local_vectors_max_rows``) and for one holding vectors, side by side in one run.

Loads a context as ``bench/local_search_scale.py`` does (or ``--reuse`` one it kept), then plays a fresh process
several times, the designs in the order A B C C B A …: it forgets what the process holds (every context's rows, the
analysed query words, the document frequencies the database's lists probed), then asks ``--queries`` questions
through the retrieval handler with the design's knobs. Prints per design: wall ms p50 / p95 / max
over those queries, the queries until the facts table was whole, and hit@10. The engine's own caches stay warm
between runs (one process): the designs alternate so each sees them alike.
One design in one run is a genuinely fresh process: run it in two code trees one after the other (``--label``).
Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/fresh_process.py --size 100000``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from typing import Any

import retrieval  # noqa: I001  # first: bench_env sets paths and environment before the service imports
from local_search_scale import ask, open_context

from agent_memory import tuning
from agent_memory.db import local_text, local_vectors, term_frequencies

DESIGNS: dict[str, dict[str, Any]] = {
    'as shipped': {},
    'texts 500 a query': {'local_text_load_rows': 500},  # the texts-only chunk as large as a vector one
    'vectors 2000 a query': {'local_vectors_load_rows': 2000},
}  # knobs over the shipped ones


def fresh() -> None:
    """Forget what this process holds, as a new process starts."""
    with local_vectors._LOCK:
        local_vectors._PER_STORE.clear()
    with term_frequencies._PER_STORE_LOCK:
        term_frequencies._PER_STORE.clear()
    with local_text.ANALYSED._lock:
        local_text.ANALYSED._words.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=100_000)
    parser.add_argument('--queries', type=int, default=100)
    parser.add_argument('--runs', type=int, default=2, help='runs per design (A B B A ...)')
    parser.add_argument('--reuse', help='a context kept by bench/local_search_scale.py --keep (same store and --size)')
    parser.add_argument('--keep', help='keep the context and write its JSON file here')
    parser.add_argument('--designs', default='as shipped', help=f'of {", ".join(DESIGNS)}')
    parser.add_argument('--label', default='', help='printed before each design (the code tree, for runs of two trees)')
    args = parser.parse_args()
    services = retrieval.get_services()
    services.embedder.warm()
    fn = retrieval.load_handler('retrieval')
    questions = retrieval.asked(retrieval.facts(args.size), args.size)
    people = len({name for name, _, _ in retrieval.facts(args.size)})
    ctx, key, load_s = open_context(services, args.size, args.reuse)
    if args.keep:
        with open(args.keep, 'w') as kept:
            json.dump({'context': ctx, 'key': key, 'size': args.size}, kept)
    for question, _ in questions[: args.queries]:
        services.embedder.embed(question)  # every run then finds the questions' vectors remembered alike
    base, names = tuning.TUNING, args.designs.split(',')
    wall: dict[str, list[float]] = {name: [] for name in names}
    until_whole: dict[str, list[int]] = {name: [] for name in names}
    entities_whole: dict[str, list[int]] = {name: [] for name in names}
    hits10: dict[str, int] = dict.fromkeys(names, 0)
    order = [names[i] for run in range(args.runs) for i in (range(len(names)) if run % 2 == 0 else reversed(range(len(names))))]
    for design in order:
        tuning.TUNING = dataclasses.replace(base, **DESIGNS[design])
        fresh()
        held, whole, entities = local_vectors.local_vectors_of(services.store(ctx), 384), 0, 0
        for i, (question, expected) in enumerate(questions[: args.queries]):
            ms, _cpu, hits = ask(fn, ctx, key, question, 'hybrid')
            wall[design].append(ms)
            hits10[design] += expected in hits
            if not whole and held.sizes().get('attribute', 0) >= args.size:
                whole = i + 1
            if not entities and held.sizes().get('entity', 0) >= people:
                entities = i + 1
        until_whole[design].append(whole)
        entities_whole[design].append(entities)
    tuning.TUNING = base
    store = os.environ.get('AGENT_MEMORY_DB_URL', 'mem://').split('://')[0]
    print(f'{args.size:,} facts on {store} (loaded in {load_s:.0f} s); a fresh process\'s first {args.queries} hybrid '
          f'queries, {args.runs} runs per design in the order {" ".join("ABCDEF"[names.index(d)] for d in order)}; '
          f'load average {os.getloadavg()[0]:.1f}')  # fmt: skip
    print(f'{"design":<34} {"p50 ms":>8} {"p95 ms":>8} {"max ms":>8} {"sum s":>7} {"whole after":>12} {"hit@10":>7}')
    for name in names:
        w = wall[name]
        print(f'{args.label + name:<34} {retrieval.pct(w, 50):>8.1f} {retrieval.pct(w, 95):>8.1f} {max(w):>8.1f} '
              f'{sum(w) / 1000 / args.runs:>7.1f} {",".join(map(str, until_whole[name])):>12} '
              f'{hits10[name] / len(w):>7.2f}')  # fmt: skip
    print(
        f'(sum s: the {args.queries} queries of one run; whole after: the query that completed the facts table, 0 = '
        f'not within them; the entities were whole after {",".join(map(str, entities_whole[names[0]]))} in {names[0]})'
    )
    if not (args.reuse or args.keep):
        services.control.delete_context(ctx)
        services.drop_context(ctx)


if __name__ == '__main__':
    main()
