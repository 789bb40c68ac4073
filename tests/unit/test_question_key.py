"""The canonical question the response cache compares, and how a stored question is recognised."""

from __future__ import annotations

import pytest

from agent_memory.domain.answer_phrasing import is_question
from agent_memory.domain.question_key import QuestionKey, question_key


def key(text: str) -> QuestionKey:
    found = question_key(text)
    assert found is not None, text
    return found


PLAN_PARAPHRASES = ['which plan am I on?', 'tell me my subscription tier?', "What's my plan, please?", 'Could you remind me of my plan']


@pytest.mark.parametrize('paraphrase', PLAN_PARAPHRASES)
def test_paraphrases_share_one_key(paraphrase: str) -> None:
    # Given a paraphrase of 'what is my current plan?', When keyed, Then it has the same key
    assert key(paraphrase) == key('what is my current plan?')


@pytest.mark.parametrize(
    ('a', 'b'),
    [
        ('when is my next vacation?', 'where is my next vacation?'),
        ('what is my phone number?', 'what is his phone number?'),
        ('what meetings do I have this week?', 'what meetings do I have next week?'),
        ('what is my plan?', 'what was my plan?'),
        ('is my plan Pro?', 'is my plan not Pro?'),
        ('what is my name?', 'what is your name?'),
    ],
)
def test_near_misses_conflict(a: str, b: str) -> None:
    # Given two questions differing in one content word, When keyed, Then the keys differ and conflict
    assert key(a) != key(b) and key(a).conflicts_with(key(b))


def test_who_does_what_to_whom_is_kept() -> None:
    # Given questions with roles swapped, When keyed, Then the keys differ
    assert key('who does Alice manage?') != key('who manages Alice?')
    assert key('does Alice report to Bob?') != key('does Bob report to Alice?')


def test_different_terms_alone_are_not_a_conflict() -> None:
    # Given questions that differ in terms but not as near misses, When keyed, Then they differ without conflicting
    assert key("what is my sister's name?") != key("what is my brother's name?")
    assert not key("What is Alice's role at Acme?").conflicts_with(key("What is Alice's job at Acme?"))


def test_a_stored_key_parses_back() -> None:
    # Given a key, When it is stored as text and parsed, Then it is the same key
    original = key('when did my sister and I last fly to Rome?')
    assert QuestionKey.parse(str(original)) == original


def test_nothing_left_to_compare_has_no_key() -> None:
    # Given a question with nothing to compare, When keyed, Then there is no key
    assert question_key('who am I?') is None and question_key('?!') is None


@pytest.mark.parametrize('text', ['what is my current plan?', 'which plan am I on', 'Tell me my plan', 'Where do I live? Where do I work?'])
def test_questions(text: str) -> None:
    # Given a question, When classified, Then it is one
    assert is_question(text)


@pytest.mark.parametrize('text', ['I am on the Pro plan.', 'When I was young I lived in Rome.', 'I moved. Where should I eat?', ''])
def test_statements(text: str) -> None:
    # Given a statement, When classified, Then it is not a question
    assert not is_question(text)


@pytest.mark.parametrize(
    ('a', 'b'),
    [("What is Борис's role?", "What is Алиса's role?"), ('Which team is Sørensen on?', 'Which team is Sårensen on?'),
     ('what is my 電話 number?', 'what is my 口座 number?')],
)  # fmt: skip
def test_words_of_any_script_stay_in_the_key(a: str, b: str) -> None:
    # Given questions differing in a non-Latin word, When keyed, Then the keys differ
    assert key(a) != key(b)


def test_a_question_without_latin_letters_has_a_key() -> None:
    # Given a Cyrillic question, When keyed with and without punctuation, Then both share one key
    assert key('Какой у меня тариф?') == key('какой у меня  тариф')
