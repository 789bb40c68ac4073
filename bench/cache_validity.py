"""The response cache's validity check (CONTRACT §8) against an entity that already has many facts (issue 14).

A cache hit re-checks that nothing new was written about the entities the answer cites. Old: one statement per table
with ``entity_ref IN $refs`` / ``in_ref IN $refs OR out_ref IN $refs``; new (``TraceStore.valid_scopes``): one index
range probe per entity and field (migration 0016). Both run in the same process on the same rows: one self entity with
N attributes, N relations and N actions written before the cached answer, then checked with nothing new (valid) and
after one new attribute (invalid); the two designs must agree.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/cache_validity.py --sizes 1000,10000
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import sys
import time
from collections.abc import Callable

from bench_env import ROOT  # noqa: F401,I001  # first: paths and environment before the service imports

from agent_memory.composition import IMPORTANCE  # noqa: E402
from agent_memory.db.connection import Database  # noqa: E402
from agent_memory.db.memory_store import MemoryStore  # noqa: E402
from agent_memory.db.records import rid  # noqa: E402
from agent_memory.db.trace_store import TraceStore  # noqa: E402

SEED_CHUNK = 200
OLD_VALIDITY = """
    RETURN {
        current: array::len(SELECT VALUE id FROM $facts
            WHERE superseded_by IS NONE AND (valid_until IS NONE OR valid_until > $now)),
        present: array::len(SELECT VALUE id FROM $others),
        new_attributes: array::len(SELECT VALUE id FROM attribute
            WHERE entity_ref IN $refs AND created_at > $made LIMIT 1),
        new_relations: array::len(SELECT VALUE id FROM relates_to
            WHERE (in_ref IN $refs OR out_ref IN $refs) AND created_at > $made LIMIT 1),
        new_actions: array::len(SELECT VALUE id FROM action
            WHERE (actor_ref IN $refs OR object_ref IN $refs) AND created_at > $made LIMIT 1),
        new_uncertainties: array::len(SELECT VALUE id FROM uncertainty
            WHERE entity_ref IN $refs AND created_at > $made LIMIT 1)
    };
"""
ENTITIES = """
UPSERT entity:['person','user'] CONTENT { name: 'user', type: 'person', memory_category: 'identity', importance_base: 0.5,
    scope_sets: [], created_at: $old, updated_at: $old } RETURN NONE;
UPSERT entity:['person','acme'] CONTENT { name: 'acme', type: 'person', memory_category: 'identity', importance_base: 0.5,
    scope_sets: [], created_at: $old, updated_at: $old } RETURN NONE;
"""
SEED = """
FOR $i IN $start..$stop {
    CREATE type::record('attribute', 'a' + <string>$i) CONTENT { entity: entity:['person','user'], key: 'k' + <string>$i,
        value: 'v' + <string>$i, memory_category: 'knowledge', importance_base: 0.5, confidence: 0.9, source: {}, valid_from: $old,
        created_at: $old, confirmed_at: $old, scope_sets: [] } RETURN NONE;
    RELATE entity:['person','user']->relates_to->entity:['person','acme'] CONTENT { label: 'knows' + <string>$i,
        memory_category: 'knowledge', importance_base: 0.5, source: {}, valid_from: $old, created_at: $old,
        confirmed_at: $old, scope_sets: [] } RETURN NONE;
    CREATE action CONTENT { actor: entity:['person','user'], object: entity:['person','acme'], verb: 'met', summary: 's' + <string>$i,
        memory_category: 'knowledge', importance_base: 0.5, source: {}, valid_from: $old, created_at: $old,
        scope_sets: [] } RETURN NONE;
};
"""
NEW_ATTRIBUTE = """
CREATE attribute:fresh CONTENT { entity: entity:['person','user'], key: 'fresh', value: 'v', memory_category: 'knowledge',
    importance_base: 0.5, confidence: 0.9, source: {}, valid_from: $now, created_at: $now, confirmed_at: $now,
    scope_sets: [] } RETURN NONE;
"""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(call: Callable[[], bool], runs: int) -> tuple[float, bool]:
    result = call()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        call()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples), result


def one_size(n: int, runs: int) -> list[str]:
    db = Database('mem://', 'bench')
    store = MemoryStore(db, f'validity{n}', IMPORTANCE)  # applies every context migration
    name = store.database
    old, made, now = (dt.datetime(2026, month, 1, tzinfo=dt.UTC) for month in (1, 6, 7))
    t0 = time.perf_counter()
    store.q(ENTITIES, old=old)
    for start in range(0, n, SEED_CHUNK):  # small FOR loops: one large FOR statement is superlinear in its row count
        store.q(SEED, old=old, start=start, stop=min(n, start + SEED_CHUNK))
    log(f'  {n:,}: seeded 3 × {n:,} rows in {time.perf_counter() - t0:.1f} s')
    refs, cited = ['person/user', 'person/acme'], [('attribute', 'a0')]
    traces = TraceStore(store)

    def old_check() -> bool:
        params = {'facts': [rid('attribute', 'a0')], 'others': [], 'refs': refs, 'made': made, 'now': now}
        r = store.q(OLD_VALIDITY, **params)[0]
        news = r['new_attributes'] or r['new_relations'] or r['new_actions'] or r['new_uncertainties']
        return bool(r['current'] == 1 and r['present'] == 0 and not news)

    def new_check() -> bool:
        return traces.valid_scopes(cited, refs, made, now) is not None

    rows = []
    for state in ('nothing new', 'one new attribute'):
        if state == 'one new attribute':
            store.q(NEW_ATTRIBUTE, now=now - dt.timedelta(days=1))
        old_ms, old_ok = timed(old_check, runs)
        new_ms, new_ok = timed(new_check, runs)
        assert old_ok == new_ok == (state == 'nothing new'), (state, old_ok, new_ok)
        rows.append(f'| {n:,} | {state} | {old_ms:.2f} | {new_ms:.2f} | {old_ms / new_ms:.1f}× | {old_ok} / {new_ok} |')
    db.query(name, f'REMOVE DATABASE {name};')
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--sizes', default='1000,10000', help='facts of each kind the cited entity already has')
    parser.add_argument('--runs', type=int, default=20)
    args = parser.parse_args()
    print(f'load average at the start: {os.getloadavg()[0]:.1f}\n')
    print('| facts per kind | state | old ms p50 | new ms p50 | old/new | valid old / new |')
    print('|---|---|---|---|---|---|')
    for n in (int(s) for s in args.sizes.split(',')):
        print('\n'.join(one_size(n, args.runs)), flush=True)
    print(f'\nload average at the end: {os.getloadavg()[0]:.1f}')


if __name__ == '__main__':
    main()
