"""The supersession rule (CONTRACT §6.3): when a new value at an address replaces the one held there."""

from __future__ import annotations

import pytest

from agent_memory.domain.reconcile import can_supersede

FLOOR = 0.7


@pytest.mark.parametrize(
    ('old_kind', 'new_kind'),
    [('turn', 'turn'), ('upsert', 'upsert'), ('upsert', 'document'), ('turn', 'upsert'), ('turn', 'document')],
)
def test_a_confident_value_of_the_same_or_a_more_authoritative_class_supersedes(old_kind: str, new_kind: str) -> None:
    # Given a held value at confidence 0.8, when a value at 0.9 arrives from the same or a more authoritative source
    # Then it replaces it
    assert can_supersede(old_kind, 0.8, new_kind, 0.9, FLOOR)


@pytest.mark.parametrize('authoritative', ['upsert', 'document'])
def test_conversation_never_supersedes_a_curated_value(authoritative: str) -> None:
    # Given a curated value, when conversation contradicts it however confidently, then it stays (it is flagged instead)
    assert not can_supersede(authoritative, 0.1, 'turn', 1.0, FLOOR)


def test_a_value_below_the_floor_does_not_supersede() -> None:
    # Given a held value at 0.5, when a value arrives at 0.69 (above the held one, below the floor), then it does not replace it
    assert not can_supersede('turn', 0.5, 'turn', FLOOR - 0.01, FLOOR)
    assert can_supersede('turn', 0.5, 'turn', FLOOR, FLOOR)  # at the floor it does


def test_a_less_sure_value_does_not_supersede_a_surer_one() -> None:
    # Given a held value at 0.95, when a value at 0.9 arrives (above the floor), then it does not replace it; an equal one does
    assert not can_supersede('turn', 0.95, 'turn', 0.9, FLOOR)
    assert can_supersede('turn', 0.9, 'turn', 0.9, FLOOR)
