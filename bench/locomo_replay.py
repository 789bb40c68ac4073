"""Offline replay of hybrid fusion on LoCoMo: tune ranking without re-running every query through the handler.

``--dump`` runs the service's own candidate lists (``Retriever.candidates``, hybrid mode, admin caller) once per
question on a copy of a cached ``bench/locomo.py`` ingest and pickles them, with every passage's (session, seq)
position, under ``bench/.cache/locomo/replay-<ingest>-<list code>-<n>.pkl``. The replay then ranks those lists
with the real ``fuse``, ``with_neighbours`` and ``reranked`` (tuning knobs overridden per variant) and scores
evidence recall@10 per category beside Okapi BM25, exactly as ``bench/locomo.py`` counts it. The lists themselves
(what the database returns) are not replayed: a change to ``db/retrieval_store.py``, to the request side of
``domain/retrieval.py`` or to a list knob makes a new dump (``retrieval_version``); fusion changes reuse it. Final
numbers always come from ``bench/locomo.py``.

Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/locomo_replay.py --conversations 0,1,2,3,4``
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import hashlib
import json
import pickle
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench_env import ROOT  # noqa: I001  # first: paths and environment before the service imports
from locomo import CACHE, CUTS, Scores, cached_ingest, code_version, opened_copy, source_turns
from locomo_data import CATEGORIES, Conversation, Okapi, default_data_path, load

# What shapes the dumped candidate lists (not the fusion replayed over them): the store's queries, the request-side
# code of domain/retrieval.py and the list knobs. Fusion code and weights stay out, so tuning them reuses the dump.
LIST_CODE = 'shared/agent_memory/db/retrieval_store.py'
LIST_KNOBS = ('list_limits', 'graph_limits', 'ef_search', 'overfetch', 'max_terms', 'df_cap', 'seed_similarity')


def retrieval_version() -> str:
    """A digest of the code (syntax trees: comments and layout do not count) and knobs that shape the dumped lists."""
    import ast
    import inspect

    from agent_memory import tuning
    from agent_memory.domain import retrieval

    def tree(source: str) -> bytes:
        return ast.dump(ast.parse(textwrap.dedent(source))).encode()

    digest = hashlib.sha256(tree((ROOT / LIST_CODE).read_text()))
    parts = (retrieval.Hit, retrieval.Retriever.candidates, retrieval.Retriever._seeds,
             retrieval.Retriever._scored_entities, retrieval.key_parts, retrieval.to_hit, retrieval.query_terms, retrieval.content_words,
             retrieval.words)  # fmt: skip
    for part in parts:
        digest.update(tree(inspect.getsource(part)))
    digest.update(repr(sorted(retrieval.STOP_WORDS)).encode())
    digest.update(repr([dict(v) if hasattr(v, 'items') else v for v in (getattr(tuning.TUNING, k) for k in LIST_KNOBS)]).encode())
    return digest.hexdigest()[:8]


def dump_path(conv: Conversation) -> Path:
    return CACHE / f'replay-{code_version()}-{retrieval_version()}-{conv.index}.pkl'


def dump(conv: Conversation, out: Path) -> None:
    """Pickle every question's candidate lists and every passage's position (runs in its own process)."""
    source = CACHE / f'{code_version()}-{conv.index}'
    with opened_copy(source, 'replay-') as manifest:
        from agent_memory.clock import utcnow
        from agent_memory.composition import get_services
        from agent_memory.domain.retrieval import RetrievalRequest, Retriever, to_hit
        from agent_memory.rows.reads import ReadFilter

        services = get_services()
        services.embedder.warm()
        store = services.store(manifest['context'])
        retriever = Retriever(store, services.embedder)
        where = ReadFilter(['*'], utcnow())
        questions = []
        for n, q in enumerate(conv.questions, 1):
            found = retriever.candidates(RetrievalRequest(q.text, 20, 'hybrid', where, 'admin'))
            questions.append(dict(found.lists))
            if n % 50 == 0:
                print(f'  {conv.sample_id}: {n}/{len(conv.questions)} questions', file=sys.stderr)
        from agent_memory.db import to_rows
        from agent_memory.db.retrieval_store import PROJECTIONS

        rows = store.q(f"SELECT {PROJECTIONS['memory_chunk']} FROM memory_chunk WHERE string::ends_with(<string> record::id(id), '_0');")[0]
        passages = [to_hit(to_rows.candidate('memory_chunk', r)) for r in rows]
        by_ref = source_turns(store, {v: k for k, v in manifest['turns'].items()})
        out.write_bytes(pickle.dumps({'questions': questions, 'passages': passages, 'by_ref': by_ref}))


def cached_dump(conv: Conversation, data: Path) -> dict[str, Any]:
    path = dump_path(conv)
    if not path.exists():
        cached_ingest(conv, data, fresh=False)  # bench/locomo.py's ingest of this conversation, made if missing
        command = [sys.executable, __file__, '--data', str(data), '--conversations', str(conv.index), '--dump-into', str(path)]
        subprocess.run(command, check=True)
    loaded: dict[str, Any] = pickle.loads(path.read_bytes())
    return loaded


@contextmanager
def overridden(values: dict[str, Any]) -> Iterator[None]:
    """The tuning knobs (agent_memory/tuning.py) with ``values`` replaced, for the duration."""
    from agent_memory import tuning

    saved = tuning.TUNING
    tuning.TUNING = dataclasses.replace(saved, **values)
    try:
        yield
    finally:
        tuning.TUNING = saved


def replay(conv: Conversation, dumped: dict[str, Any], variant: dict[str, Any], scores: Scores) -> None:
    """Fuse each question's lists as ``Retriever.run`` does in hybrid mode and score the top ``max(CUTS)``."""
    from agent_memory.domain import retrieval

    at = {h.position: h for h in dumped['passages'] if h.position}
    by_ref = dumped['by_ref']
    variant = dict(variant)
    depth = variant.pop('depth', {})  # list name -> rows kept: a shorter list than the dump's, as a smaller LIMIT gives
    with overridden(variant):
        for q, lists in zip(conv.questions, dumped['questions'], strict=True):
            lists = {name: hits[: depth.get(name, len(hits))] for name, hits in lists.items()}
            pool = retrieval.fuse(copy.deepcopy(lists))
            best = [(h.id, h.position) for h in retrieval.best_passages(lists) if h.position]
            adjacent = {hit_id: [copy.deepcopy(at[n]) for n in ((p[0], p[1] - 1), (p[0], p[1] + 1)) if n in at] for hit_id, p in best}
            pool = retrieval.reranked(retrieval.with_neighbours(pool, adjacent), q.text)
            scores.add(q, [{by_ref[h.id]} if h.id in by_ref else set() for h in pool[: max(CUTS)]])


def table(rows: dict[str, Scores]) -> None:
    header = ' '.join(f'{CATEGORIES[c]:>11}' for c in CATEGORIES)
    print(f'{"recall@10":<28} {header} {"overall":>8} {"r@5":>6} {"r@20":>6}')
    for label, s in rows.items():
        per = ' '.join(f'{s.recall(10, c):>11.3f}' for c in CATEGORIES)
        print(f'{label:<28} {per} {s.recall(10):>8.3f} {s.recall(5):>6.3f} {s.recall(20):>6.3f}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--data', type=Path, default=default_data_path(ROOT))
    parser.add_argument('--conversations', default='0,1,2,3,4')
    parser.add_argument('--variants', type=Path, help='JSON {label: {knob: value}}: tuning.py overrides; depth {list: rows}')
    parser.add_argument('--dump-into', type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    conversations = load(args.data, [int(i) for i in args.conversations.split(',')])
    if args.dump_into:
        dump(conversations[0], args.dump_into)
        return
    variants: dict[str, dict[str, Any]] = {'as coded': {}}
    if args.variants:
        variants.update(json.loads(args.variants.read_text()))
    dumps = {conv.index: cached_dump(conv, args.data) for conv in conversations}
    splits = {'all': [c.index for c in conversations], '0-2': [0, 1, 2], '3-4': [3, 4]}
    for split, members in splits.items():
        chosen = [c for c in conversations if c.index in members]
        if not chosen or (split != 'all' and len(chosen) == len(conversations)):
            continue
        rows: dict[str, Scores] = {}
        okapi = rows['Okapi BM25'] = Scores()
        for conv in chosen:
            ranked = Okapi([t.text for t in conv.turns])
            for q in conv.questions:
                okapi.add(q, [{conv.turns[i].dia_id} for i in ranked.top(q.text, max(CUTS))])
        for label, variant in variants.items():
            rows[label] = Scores()
            for conv in chosen:
                replay(conv, dumps[conv.index], variant, rows[label])
        print(f'\nconversations {split} ({sum(len(c.questions) for c in chosen)} questions)')
        table(rows)


if __name__ == '__main__':
    main()
