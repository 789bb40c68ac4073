"""`/query` on a LoCoMo conversation with the passage and fact vectors searched in the process or by the database's
HNSW KNN, and their texts ranked in the process or by the database's full-text indexes, the designs alternated
question by question in one process on one copy of a cached ``bench/locomo.py`` ingest.

Run (after ``bench/locomo.py`` cached the conversation's ingest under this code):
``PYTHONPATH=shared:infra:. .venv/bin/python bench/local_vectors.py --conversation 4 --rounds 2``

Prints wall and CPU ms per query (p50 / p95) for each design, the first query of the in-process design apart (it
reads the table's vectors), and how often each design returned the database design's hits.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from typing import Any

from bench_env import ROOT, load_handler  # noqa: I001  # first: paths and environment before the service imports
from designs import searched_here
from locomo import CACHE, Api, code_version, opened_copy, pct
from locomo_data import default_data_path, load

DESIGNS: dict[str, dict[str, Any]] = {
    'database': {'local_vectors_max_rows': 0, 'local_text_max_rows': 0},
    'vectors here': {'local_vectors_max_rows': 20_000, 'local_text': False},
    'vectors + text here': {'local_vectors_max_rows': 20_000, 'local_text': True},
    'entities in the database': {'local_vectors_max_rows': 20_000, 'local_text': True},  # Session 8's design
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--conversation', type=int, default=4)
    parser.add_argument('--rounds', type=int, default=2, help='passes over the questions')
    args = parser.parse_args()
    conv = load(default_data_path(ROOT), [args.conversation])[0]
    source = CACHE / f'{code_version()}-{args.conversation}'
    if not (source / 'manifest.json').exists():
        raise SystemExit(f'no cached ingest at {source}: run bench/locomo.py --conversations {args.conversation} first')
    with opened_copy(source, 'locomo-vectors-') as manifest:
        from agent_memory import tuning
        from agent_memory.composition import get_services
        from agent_memory.domain.contexts import patch_context

        services = get_services()
        services.embedder.warm()
        patch_context(services.control, manifest['context'], {'rate_limit': {'enabled': False}})
        api = Api(load_handler('retrieval'), manifest['context'], manifest['key'])
        questions = list(conv.questions)
        wall: dict[str, list[float]] = {d: [] for d in DESIGNS}
        cpu: dict[str, list[float]] = {d: [] for d in DESIGNS}
        same, first = dict.fromkeys(DESIGNS, 0), None
        base = tuning.TUNING
        tuning.TUNING = dataclasses.replace(base, **DESIGNS['database'])
        api.post('query', {'query': 'warm up', 'k': 10}, 'warm up')  # the process's first query: cold caches, not counted
        for round_ in range(args.rounds):
            for i, q in enumerate(questions):
                names = list(DESIGNS)
                order = names[(i + round_) % len(names) :] + names[: (i + round_) % len(names)]
                hits: dict[str, Any] = {}
                for design in order:
                    tuning.TUNING = dataclasses.replace(base, **DESIGNS[design])
                    started, cpu0 = time.perf_counter(), time.process_time()
                    with searched_here(design):
                        hits[design] = [h['id'] for h in api.post('query', {'query': q.text, 'k': 10}, design)['hits']]
                    ms, cpu_ms = (time.perf_counter() - started) * 1000, (time.process_time() - cpu0) * 1000
                    if DESIGNS[design]['local_vectors_max_rows'] and first is None:
                        first = ms
                        continue
                    wall[design].append(ms)
                    cpu[design].append(cpu_ms)
                for design in DESIGNS:
                    same[design] += hits[design] == hits['database']
        tuning.TUNING = base
    n = args.rounds * len(questions)
    print(f'LoCoMo conversation {args.conversation}: {len(questions)} questions x {args.rounds} rounds, designs alternated')
    print(f'{"design":<20} {"wall p50":>9} {"wall p95":>9} {"cpu p50":>8} {"cpu p95":>8} {"same top 10 as database":>24}')
    for design in DESIGNS:
        w, c = wall[design], cpu[design]
        print(f'{design:<20} {pct(w, 50):>9.1f} {pct(w, 95):>9.1f} {pct(c, 50):>8.1f} {pct(c, 95):>8.1f} {same[design]:>17} of {n}')
    print(f'first in-process query (reads the vectors and texts): {first:.1f} ms')


if __name__ == '__main__':
    main()
