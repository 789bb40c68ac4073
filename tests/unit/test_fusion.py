"""The fusion rules of hybrid retrieval (domain/retrieval.py), on hand-built candidate lists."""

from __future__ import annotations

import pytest

from agent_memory.domain.retrieval import Hit, fuse, with_neighbours
from agent_memory.tuning import TUNING


def fact(name: str, score: float = 0.0, importance: float = 1.0) -> Hit:
    return Hit(f'attribute:{name}', 'attribute', score, name, None, {}, importance, ())


def passage(name: str, score: float = 0.0, seq: int | None = None, role: str = 'user') -> Hit:
    hit = Hit(f'memory_chunk:{name}', 'memory_chunk', score, name, None, {'sessionId': 's'}, None, (), role=role)
    hit.position = ('s', seq) if seq is not None else None
    return hit


def order(pool: list[Hit]) -> list[str]:
    return [h.text for h in pool]


def test_importance_cannot_lift_an_unrelated_fact_over_a_relevant_passage() -> None:
    """A fact at the top of graph expansion and barely similar to the query, reinforced to the cap, stays below a
    passage both passage lists rank first."""
    # Given a relevant passage and an unrelated, much reinforced fact, When fused, Then the passage ranks first
    pool = fuse(
        {
            'vector:memory_chunk': [passage('answer', 0.62)],
            'bm25:memory_chunk': [passage('answer', 7.5)],
            'vector:attribute': [fact('likes: to', 0.31, importance=2.0)],
            'graph': [fact('likes: to', importance=2.0)],
        }
    )
    assert order(pool) == ['answer', 'likes: to']


def test_a_fact_below_the_similarity_floor_takes_no_rank_from_relevant_facts() -> None:
    # Given a fact below the similarity floor ahead of a relevant one, When fused, Then it is dropped and the relevant
    # fact keeps rank 1
    pool = fuse({'vector:attribute': [fact('unrelated', 0.2), fact('relevant', 0.7)]})
    assert order(pool) == ['relevant']
    assert pool[0].lists == {'vector:attribute': 1}
    assert pool[0].score == pytest.approx(TUNING.list_weights['vector:attribute'] / (TUNING.rrf_k + 1) * (0.9 + 1.0 / 10))


def test_importance_still_orders_facts_of_similar_relevance() -> None:
    # Given two facts of similar relevance, When fused, Then the more important one ranks first
    pool = fuse({'vector:attribute': [fact('rarely used', 0.80, importance=0.2), fact('often recalled', 0.79, importance=2.0)]})
    assert order(pool) == ['often recalled', 'rarely used']


def test_prior_assistant_replies_rank_below_what_users_said() -> None:
    # Given a user passage and an assistant reply ranked alike, When fused, Then what the user said ranks first
    pool = fuse({'vector:memory_chunk': [passage('reply', 0.7, role='assistant'), passage('said', 0.69)]})
    assert order(pool) == ['said', 'reply']


def test_an_assistant_echo_of_a_fact_does_not_outrank_the_fact() -> None:
    # Given a fact first in both fact lists, and a prior assistant reply repeating it first in both passage lists
    echo = passage('From memory: Alice pet: a cat [S1].', 0.7, role='assistant')
    lists = {'vector:attribute': [fact('Alice pet: a cat', 0.8)], 'bm25:attribute': [fact('Alice pet: a cat', 3.0)],
             'vector:memory_chunk': [echo], 'bm25:memory_chunk': [echo]}  # fmt: skip
    # When fused, Then the fact ranks first: the memory's own output is not evidence over what it repeats
    assert order(fuse(lists)) == ['Alice pet: a cat', 'From memory: Alice pet: a cat [S1].']


def test_adjacent_turns_gain_a_share_of_the_passage_that_brought_them() -> None:
    # Given a passage and its reply not in the pool, When neighbours join, Then the reply scores the neighbour share of
    # the passage
    question, other = passage('question', seq=4), passage('other')
    question.score, other.score = 0.030, 0.020
    reply = passage('reply', seq=5)
    pool = with_neighbours([question, other], {question.id: [reply]})
    assert order(pool) == ['question', 'other', 'reply']
    assert reply.score == pytest.approx(0.030 * TUNING.neighbour_share) and reply.lists == {'adjacent': 1}
    other.score = 0.010  # a weaker unrelated passage falls below the neighbour
    assert order(with_neighbours([question, other], {question.id: [passage('reply', seq=5)]})) == ['question', 'reply', 'other']


def test_an_adjacent_turn_already_in_the_pool_adds_to_its_own_score() -> None:
    # Given a reply already in the pool, When it joins as a neighbour, Then the share adds to its own score
    question, reply = passage('question', seq=4), passage('reply', seq=5)
    question.score, reply.score = 0.030, 0.010
    pool = with_neighbours([question, reply], {question.id: [passage('reply', seq=5)]})
    assert [h.id for h in pool] == [question.id, reply.id]
    assert pool[1].score == pytest.approx(0.010 + 0.030 * TUNING.neighbour_share)


def test_a_passage_ranked_first_leads_a_fact_derived_from_what_was_said() -> None:
    # Given a stage-0 fact both fact lists rank first and a passage one passage list ranks first, When fused, Then the
    # passage leads: facts count half a passage list at the same rank (LoCoMo dev split, bench/README.md)
    pool = fuse(
        {
            'vector:attribute': [fact('Joanna likes: hiking', 0.71)],
            'bm25:attribute': [fact('Joanna likes: hiking', 6.0)],
            'bm25:memory_chunk': [passage('Joanna: I found two new trails last weekend!', 7.0)],
        }
    )
    assert order(pool) == ['Joanna: I found two new trails last weekend!', 'Joanna likes: hiking']
