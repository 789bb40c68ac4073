"""Old and new retrieval store on the same rows, interleaved in one process: what the database part of a hybrid
retrieval costs (the lists, the seeds' graph to two hops, tier 1, the adjacent turns), wall and CPU per query.

The old store is another tree's ``db/retrieval_store.py`` (e.g. ``git worktree add /tmp/old <commit>``) loaded beside
this one; both share one memo of term counts (warmed first), so neither pays a probe and only the statements and
their round trips differ. The old store is driven the way its ``Retriever`` drove it (one call per list, graph hop,
key lookup and adjacency read); the new one through ``lists`` and ``expand``. Seeds and best passages come from this
tree's ``Retriever``. Needs a cached LoCoMo ingest (``bench/locomo.py``). Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/retrieval_store_ab.py --old /tmp/old/shared/agent_memory/db/retrieval_store.py``
"""

from __future__ import annotations

import argparse
import datetime as dt
import importlib.util
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench_env import ROOT  # noqa: I001  # first: paths and environment before the service imports
from locomo import CACHE, code_version, opened_copy
from locomo_data import default_data_path, load


def load_old(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location('old_retrieval_store', path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules['old_retrieval_store'] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--old', type=Path, required=True, help="the old tree's shared/agent_memory/db/retrieval_store.py")
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT))
    parser.add_argument('--conversation', type=int, default=0)
    parser.add_argument('--questions', type=int, default=15)
    parser.add_argument('--repeats', type=int, default=4, help='rounds, old and new alternating which goes first')
    args = parser.parse_args()
    conv = load(args.data, [args.conversation])[0]
    source = CACHE / f'{code_version()}-{conv.index}'
    with opened_copy(source, 'store-ab-') as manifest:
        from agent_memory.composition import get_services
        from agent_memory.db.retrieval_store import Expansion, ListLookup, ReadFilter, RetrievalStore
        from agent_memory.domain.retrieval import RetrievalRequest, Retriever, best_passages, is_first_person, key_parts, query_terms
        from agent_memory.tuning import knobs

        services = get_services()
        store = services.store(manifest['context'])
        where = ReadFilter(['*'], dt.datetime.now(dt.UTC))
        new = RetrievalStore(store)
        old = load_old(args.old).RetrievalStore(store, new.frequencies)
        retriever = Retriever(store, services.embedder)
        limits = dict(knobs().list_limits)
        cases = []
        for text in [q.text for q in conv.questions[:: max(1, len(conv.questions) // args.questions)]][: args.questions]:
            vector = services.embedder.embed([text])[0]
            found = retriever.candidates(RetrievalRequest(text, 10, 'hybrid', where, 'admin'), vector)
            old.text_lists(limits, query_terms(text), where)  # the old plan's counts, remembered too
            turns = [h.position for h in best_passages(found.lists) if h.position is not None]
            cases.append((text, vector, found.seeds, turns))

        def run_old(text: str, vector: list[float], seeds: Any, turns: list[tuple[str, int]]) -> None:
            frontier, visited = list(seeds.refs), set(seeds.refs)
            for depth, limit in enumerate(knobs().graph_limits):
                if not frontier:
                    break
                old.facts_about(frontier, limit, where, vector)
                if depth + 1 < len(knobs().graph_limits):
                    frontier = [r for r in old.neighbours(frontier, where) if r not in visited][:64]
                    visited.update(frontier)
            old.attributes_at(seeds.named, old.attribute_keys(seeds.named, where), where)
            old.adjacent_passages(turns, where)
            old.vector_lists(limits, vector, where)
            old.text_lists(limits, query_terms(text), where)
            if is_first_person(text):
                old.self_entities('admin', where)

        def run_new(text: str, vector: list[float], seeds: Any, turns: list[tuple[str, int]]) -> None:
            principal = 'admin' if is_first_person(text) else None
            new.lists(where, limits, ListLookup(vector=vector, terms=query_terms(text), principal=principal))
            expansion = Expansion(seeds=seeds.refs, depths=knobs().graph_limits, named=seeds.named, parts=key_parts(text), turns=turns)
            new.expand(where, expansion, vector)

        totals = {'old': [0.0, 0.0], 'new': [0.0, 0.0]}
        load_before = os.getloadavg()[0]
        for repeat in range(args.repeats):
            order = [('old', run_old), ('new', run_new)]
            for name, run in order if repeat % 2 == 0 else order[::-1]:
                wall, cpu = time.perf_counter(), time.process_time()
                for case in cases:
                    run(*case)
                totals[name][0] += time.perf_counter() - wall
                totals[name][1] += time.process_time() - cpu
        calls = len(cases) * args.repeats
        print(f'conversation {conv.index}, {calls} questions per store; load average {load_before:.1f} → {os.getloadavg()[0]:.1f}')
        for name, (wall, cpu) in totals.items():
            print(f'{name}: {wall / calls * 1000:.1f} ms wall, {cpu / calls * 1000:.1f} ms CPU per query')


if __name__ == '__main__':
    main()
