"""Where a hybrid ``POST /query`` spends its time at scale, on bench/retrieval.py's synthetic facts, as shipped.

Loads a context as ``bench/local_search_scale.py`` does (or ``--reuse`` one it kept on SurrealKV), lets the process
read the tables, then asks each question ``--rounds`` times through the retrieval handler, timing from outside: the
query embedding, authentication, the two read round trips of ``RetrievalStore`` (``lists``, ``expand``) with the
ranking done in the process inside ``lists`` (``LocalVectors.ready`` / ``nearest`` / ``text_search``) reported apart,
the write (trace + reinforcement in one transaction) and the JSON body; every database call is also timed on its own
(``Database.query``: the engine, the SDK's encoding and decoding). The rest is the handler's Python. Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/query_stages_scale.py --size 10000``
"""

from __future__ import annotations

import argparse
import os
import statistics

import retrieval  # noqa: I001  # first: bench_env sets paths and environment before the service imports
from local_search_scale import ask, open_context
from query_stages import Stages, pct

from agent_memory.db.connection import Database
from agent_memory.db.local_vectors import LocalVectors, local_vectors_of
from agent_memory.db.retrieval_store import RetrievalStore

TIMED = (
    (RetrievalStore, 'lists', 'lists (round trip 1)'),
    (RetrievalStore, 'expand', 'expand (round trip 2)'),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--size', type=int, default=10_000)
    parser.add_argument('--rounds', type=int, default=2)
    parser.add_argument('--reuse', help='a context kept by bench/local_search_scale.py --keep (SurrealKV)')
    args = parser.parse_args()
    services = retrieval.get_services()
    services.embedder.warm()
    fn = retrieval.load_handler('retrieval')
    questions = retrieval.asked(retrieval.facts(args.size), args.size)
    ctx, key, _load_s = open_context(services, args.size, args.reuse)
    held = local_vectors_of(services.store(ctx), 384)
    warm = 0
    while held.sizes().get('attribute', 0) < args.size and warm < 1000:
        ask(fn, ctx, key, questions[warm % len(questions)][0], 'hybrid')
        warm += 1
    outer, engine = Stages(), Stages()  # engine: every Database.query, also those nested in a stage
    for owner, name, label in TIMED:
        outer.wrap(owner, name, label)
    outer.wrap(services.embedder, 'embed', 'embed the query')
    outer.wrap_path('agent_memory.domain.auth', 'authenticate', 'authentication')
    outer.wrap_path('agent_memory.db.memory_store', 'MemoryStore.apply', 'write: trace + reinforcement')
    outer.wrap(fn, 'json_response', 'json body')
    here = Stages()
    for name in ('ready', 'nearest', 'text_search'):
        here.wrap(LocalVectors, name, 'ranked in the process')
    engine.wrap(Database, 'query', 'database calls')
    engine.count_round_trips(Database)
    total: list[float] = []
    load_before = os.getloadavg()[0]
    for _ in range(args.rounds):
        for question, _expected in questions:
            ms, _cpu, _hits = ask(fn, ctx, key, question, 'hybrid')
            total.append(ms)
    n = len(total)
    store = os.environ.get('AGENT_MEMORY_DB_URL', 'mem://').split('://')[0]
    print(f'{args.size:,} facts on {store}, {n} hybrid queries (process warm after {warm}); load average '
          f'{load_before:.1f} -> {os.getloadavg()[0]:.1f}')  # fmt: skip
    print(f'{"stage":<32} {"ms/query":>9} {"p50 ms":>8} {"p95 ms":>8}')
    accounted = 0.0
    for label, values in sorted(outer.times.items(), key=lambda kv: -sum(kv[1])):
        accounted += sum(values)
        print(f'{label:<32} {sum(values) / n:>9.1f} {pct(values, 50):>8.1f} {pct(values, 95):>8.1f}')
    print(f'{"rest of the handler":<32} {(sum(total) - accounted) / n:>9.1f}')
    for stages in (here, engine):
        for label, values in stages.times.items():
            print(f'  of which {label:<22} {sum(values) / n:>9.1f}   ({len(values) / n:.1f} calls a query)')
    print(f'{"POST /query":<32} {statistics.mean(total):>9.1f} {pct(total, 50):>8.1f} {pct(total, 95):>8.1f}')
    if not args.reuse:
        services.control.delete_context(ctx)
        services.drop_context(ctx)


if __name__ == '__main__':
    main()
