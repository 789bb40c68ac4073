"""What a fact's ``search_text`` costs each write of the fact: 0005's expression (``entity.name``: the entity row, with
its 384-float embedding, is decoded) beside 0020's (the name from the entity's lean row), alternated in one run.

10k facts over 2k people with real MiniLM embeddings (the cached vectors of ``bench/retrieval.py``), on ``mem://``.
Timed: the reinforcement ``UPDATE`` one ``/query`` sends (10 facts at random), and an ``UPDATE`` of one field of the
same rows (what expiry, supersession and confirmation send). Run:
``PYTHONPATH=shared:infra:. .venv/bin/python bench/search_text_writes.py [--facts 10000] [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from typing import Any

import numpy as np  # noqa: E402
import retrieval  # noqa: E402,I001  # first: bench_env's paths and environment before the service imports

from agent_memory.composition import IMPORTANCE, get_services  # noqa: E402
from agent_memory.db.records import Tx  # noqa: E402
from agent_memory.db.reinforcement import reinforce_statement  # noqa: E402

TAIL = "' ', string::replace(key, '_', ' '), ' ', value)"
DESIGNS = {
    '0005: entity.name': f"string::concat(entity.name ?? '', {TAIL}",
    '0020: lean name': f"string::concat(type::record('entity_lean', record::id(entity)).name ?? entity.name ?? '', {TAIL}",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--facts', type=int, default=10_000)
    parser.add_argument('--rounds', type=int, default=3, help='times each design is measured, alternated')
    parser.add_argument('--writes', type=int, default=30, help='statements per design and round')
    args = parser.parse_args()
    services = get_services()
    rows = retrieval.facts(args.facts)
    names = sorted({n for n, _, _ in rows})
    vectors, by_name = retrieval.corpus_vectors(services, args.facts)
    ctx, _ = retrieval.new_context(services, args.facts)
    retrieval.load_rows(services, ctx, rows, vectors, names, np.asarray([by_name[n] for n in names], dtype=np.float32))
    store = services.store(ctx)
    ids = store.q('SELECT VALUE id FROM attribute;')[0]
    rng = random.Random(5)

    def reinforce(pick: list[Any]) -> tuple[str, dict[str, Any]]:
        tx = Tx()
        return reinforce_statement(tx, pick, IMPORTANCE) + ' RETURN NONE;', tx.params

    def one_field(pick: list[Any]) -> tuple[str, dict[str, Any]]:
        return 'UPDATE $ids SET confirmed_at = time::now() RETURN NONE;', {'ids': pick}

    results: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for design, expression in list(DESIGNS.items())[:: 1 if round_ % 2 == 0 else -1]:  # each goes first in turn
            store.q(f'DEFINE FIELD OVERWRITE search_text ON attribute VALUE {expression};')
            for label, statement in (('reinforcement', reinforce), ('one field', one_field)):
                for _ in range(args.writes):
                    sql, params = statement(rng.sample(ids, 10))
                    cpu = time.process_time()
                    store.q(sql, **params)
                    results.setdefault((label, design), []).append((time.process_time() - cpu) * 1000)
    load = os.getloadavg()[0]
    print(f'\n{args.facts:,} facts, 10 random facts per UPDATE, {args.rounds} alternated rounds of {args.writes}, load {load:.1f}')
    print('| UPDATE of 10 facts | ' + ' | '.join(f'{d} CPU ms (median)' for d in DESIGNS) + ' |')
    print('|---|' + '---|' * len(DESIGNS))
    for label in ('reinforcement', 'one field'):
        print(f'| {label} | ' + ' | '.join(f'{statistics.median(results[(label, d)]):.2f}' for d in DESIGNS) + ' |')


if __name__ == '__main__':
    main()
