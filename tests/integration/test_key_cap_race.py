"""The per-principal key cap holds under concurrent mints (MAX_KEYS_PER_PRINCIPAL).

In process every query goes through one connection, one at a time, so the race needs what production has: several
connections (Lambda instances) whose transactions run in the engine at once. Each thread here has its own ``Database``
on a ws:// bridge to one real embedded engine that does not serialise requests.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from agent_memory.clock import utcnow
from agent_memory.db.connection import Database, context_db_name
from agent_memory.db.control_store import MAX_KEYS_PER_PRINCIPAL, ControlStore
from agent_memory.errors import Conflict
from agent_memory.rows.control import KeyRecord
from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

MINTERS, MINTS_EACH, ROUNDS, FREE = 8, 3, 6, 4


@pytest.fixture
def bridge() -> Iterator[WsBridge]:
    server = WsBridge(serial=False).start()
    yield server
    server.close()


def key(name: str) -> KeyRecord:
    return KeyRecord('capctx', 'bob', name, f'hash-{name}', None, None)


def test_concurrent_mints_never_overshoot_the_key_cap(bridge: WsBridge) -> None:
    # Given a principal FREE keys below the cap, and MINTERS connections of their own
    control = ControlStore(Database(bridge.url, 'keycap', ROOT_USER, ROOT_PASSWORD))
    control.create_context('capctx', {}, utcnow())
    control.db.query(context_db_name('capctx'), "CREATE principal:bob SET display_name = 'Bob', kind = 'human', grants = {}, "
                     "default_scopes = [['/']], created_at = time::now();")  # fmt: skip
    for i in range(MAX_KEYS_PER_PRINCIPAL - FREE):
        control.create_key(key(f'k{i}'), utcnow())
    minters = [ControlStore(Database(bridge.url, 'keycap', ROOT_USER, ROOT_PASSWORD)) for _ in range(MINTERS)]
    for round_ in range(ROUNDS):
        start = threading.Barrier(MINTERS)

        def mint(n: int, round_: int = round_, start: threading.Barrier = start) -> int:
            start.wait()
            minted = 0
            for j in range(MINTS_EACH):
                try:
                    minters[n].create_key(key(f'r{round_}-{n}-{j}'), utcnow())
                    minted += 1
                except Conflict:  # the cap (409)
                    pass
            return minted

        # When they all mint at once
        with ThreadPoolExecutor(MINTERS) as pool:
            minted = sum(pool.map(mint, range(MINTERS)))
        # Then exactly the free places were taken: none beyond the cap, and no mint lost to a conflict
        held = control.list_keys('capctx', 'bob')
        assert (len(held), minted) == (MAX_KEYS_PER_PRINCIPAL, FREE), f'round {round_}'
        for raced in [k for k in held if k.name.startswith('r')]:
            assert control.delete_key('capctx', 'bob', raced.name)
