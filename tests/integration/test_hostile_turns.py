"""Hostile turns cannot stall the extractor (issue 12 hole 3): stage 0 is linear in the turn's length.

Not a timing test: the bound is ~100× the measured time of the fixed code (about 0.2 s on the 2-core dev host) and a
quadratic pattern takes 30–50 s on the same input; bench/stage0_adversarial.py prints the real numbers per case.
"""

from __future__ import annotations

import time

from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api

GENEROUS_BOUND_S = 15.0


def test_a_20_kb_run_of_commas_is_previewed_without_quadratic_blow_up(api: Api, store: MemoryStore) -> None:
    # Given the reproduction from the review: 20 KB of ", " (a trailing-filler pattern backtracked from every comma)
    before = snapshot(store)
    started = time.perf_counter()

    # When it is previewed
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'preview', 'text': ', ' * 10_000})

    # Then it answers with nothing extracted, nothing stored, and in linear time
    elapsed = time.perf_counter() - started
    assert code == 200 and body['preview'] is True, body
    assert not any(body['extraction'][part] for part in ('attributes', 'instructions', 'relations', 'actions'))
    assert snapshot(store) == before
    assert elapsed < GENEROUS_BOUND_S, f'{elapsed:.1f} s for 20 KB of commas'
