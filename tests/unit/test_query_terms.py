"""The words of a question that the lexical lists search for (domain/retrieval.py ``query_terms``)."""

from __future__ import annotations

from agent_memory.domain.retrieval import query_terms, words


def test_pronouns_and_function_words_are_no_search_terms() -> None:
    """ "her" and "his" are in a large share of any conversation: left in a question they only add noise."""
    assert query_terms('When did Nate win his first video game tournament?') == ['nate', 'win', 'first', 'video', 'game', 'tournament']
    assert query_terms('What did she say about her sister before the trip?') == ['say', 'sister', 'trip']


def test_a_possessive_names_its_owner() -> None:
    assert words("What are Joanna's hobbies?") == ['what', 'are', 'joanna', 'hobbies']
    assert words('What is Joanna\u2019s favourite food?') == ['what', 'is', 'joanna', 'favourite', 'food']
    assert query_terms("Which pets wouldn't bother Joanna's cat?") == ['pets', 'bother', 'joanna', 'cat']


def test_a_question_of_stopwords_only_keeps_its_words() -> None:
    assert query_terms('Who was it?') == ['who', 'was', 'it']
