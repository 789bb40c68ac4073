"""The response cache's question key on words outside ASCII (names in any script, accented words).

A same-key hit ignores the similarity threshold, so a key that loses a word makes two different questions one:
"What is Алиса's role?" must never be answered with the cached reply about Борис.
"""

from __future__ import annotations

from tests.support.chat import chat
from tests.support.handlers import Api


def remember(api: Api, name: str, key: str, value: str) -> None:
    triple = {'entity': {'type': 'person', 'name': name}, 'key': key, 'value': value}
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})
    assert code == 200, body


def test_a_question_about_another_person_named_in_another_script_is_not_served_the_cached_answer(api: Api) -> None:
    # Given a cached answer about a person named in Cyrillic, When the same question names another person in Latin
    # script, Then it is answered fresh while the original still hits
    remember(api, 'Борис', 'role', 'CFO')
    remember(api, 'Алиса', 'role', 'CTO')
    first = chat(api, "What is Борис's role?")
    assert first['cached'] is False and 'CFO' in first['reply']
    other = chat(api, "What is Алиса's role?")
    assert other['cached'] is False and 'CTO' in other['reply']
    assert chat(api, "What is Борис's role?")['cached'] is True  # the same question still hits


def test_accented_names_that_differ_in_one_letter_are_different_questions(api: Api) -> None:
    # Given a cached answer about Sørensen, When Sårensen is asked about, Then it is answered fresh
    remember(api, 'Sørensen', 'team', 'Data')
    remember(api, 'Sårensen', 'team', 'Infra')
    chat(api, 'Which team is Sørensen on?')
    assert chat(api, 'Which team is Sårensen on?')['cached'] is False
