"""Hostile turns through the handler (issue 12 hole 3): the review's reproduction is answered, extracts nothing and
stores nothing. That stage 0 stays linear on such input is checked in CPU time by
``tests/unit/test_stage0_linear_time.py``; bench/stage0_adversarial.py prints the real numbers per case.
"""

from __future__ import annotations

from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api


def test_a_20_kb_run_of_commas_is_previewed_with_nothing_extracted_or_stored(api: Api, store: MemoryStore) -> None:
    # Given the reproduction from the review: 20 KB of ", " (a trailing-filler pattern backtracked from every comma)
    before = snapshot(store)

    # When it is previewed
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'preview', 'text': ', ' * 10_000})

    # Then it answers with nothing extracted and nothing stored
    assert code == 200 and body['preview'] is True, body
    assert not any(body['extraction'][part] for part in ('attributes', 'instructions', 'relations', 'actions'))
    assert snapshot(store) == before
