"""Which stored keys answer a question (domain/asked.py): the keys people give triples, not only stage 0's own."""

from __future__ import annotations

import pytest

from agent_memory.domain.asked import asked


@pytest.mark.parametrize(
    ('question', 'key'),
    [
        ('Where does Ada live?', 'location'),
        ('Where does Ada live?', 'city'),
        ('Which city is Ada in?', 'lives_in'),
        ('Where does Ada work?', 'employer'),
        ('Where does Ada work?', 'company'),
        ('What plan is Ada on?', 'plan'),
    ],
)
def test_a_question_is_answered_by_the_keys_people_use(question: str, key: str) -> None:
    assert key in asked(question).keys


def test_a_where_question_is_not_answered_by_an_unrelated_key() -> None:
    assert not {'plan', 'employer', 'company'} & asked('Where does Ada live?').keys
