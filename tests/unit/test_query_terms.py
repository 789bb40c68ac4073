"""The words of a question that the lexical lists search for (domain/retrieval.py ``query_terms``)."""

from __future__ import annotations

from agent_memory.domain.retrieval import key_parts, query_terms, words


def test_pronouns_and_function_words_are_no_search_terms() -> None:
    """ "her" and "his" are in a large share of any conversation: left in a question they only add noise."""
    # Given questions with pronouns and function words, When their query terms are taken, Then only the content words remain
    assert query_terms('When did Nate win his first video game tournament?') == ['nate', 'win', 'first', 'video', 'game', 'tournament']
    assert query_terms('What did she say about her sister before the trip?') == ['say', 'sister', 'trip']


def test_a_possessive_names_its_owner() -> None:
    # Given questions with straight and curly possessives, When they are split into words and query terms, Then each possessive becomes its
    # owner's name
    assert words("What are Joanna's hobbies?") == ['what', 'are', 'joanna', 'hobbies']
    assert words('What is Joanna\u2019s favourite food?') == ['what', 'is', 'joanna', 'favourite', 'food']
    assert query_terms("Which pets wouldn't bother Joanna's cat?") == ['pets', 'bother', 'joanna', 'cat']


def test_a_question_of_stopwords_only_keeps_its_words() -> None:
    # Given a question of stopwords only, When its query terms are taken, Then all its words are kept
    assert query_terms('Who was it?') == ['who', 'was', 'it']


def test_key_parts_match_a_content_word_with_or_without_its_plural_s() -> None:
    # Given questions naming a key word in the singular and in the plural, When tier 1's key parts are derived, Then
    # both spellings of the stem are matched and function words are not
    assert key_parts('Which editor does Ana use?') >= {'editor', 'editors', 'ana', 'anas', 'use', 'uses'}
    assert {'editor', 'editors'} <= key_parts('Which editors does Ana use?')
    assert key_parts('What is my plan?') == {'plan', 'plans'}
    assert key_parts('Any news?') == {'new', 'news'}  # a part's stem drops one "s": "news" and "new" both match
