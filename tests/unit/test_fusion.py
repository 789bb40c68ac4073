"""The fusion rules of hybrid retrieval (domain/retrieval.py), on hand-built candidate lists."""

from __future__ import annotations

import pytest

from agent_memory.domain.retrieval import Hit, asks_when, fuse, is_dated, reranked, with_neighbours
from agent_memory.tuning import TUNING


def fact(name: str, score: float = 0.0, importance: float = 1.0, turn: str | None = None) -> Hit:
    return Hit(f'attribute:{name}', 'attribute', score, name, None, {}, importance, (), turn=turn)


def passage(name: str, score: float = 0.0, seq: int | None = None, role: str = 'user', turn: str | None = None) -> Hit:
    hit = Hit(f'memory_chunk:{name}', 'memory_chunk', score, name, None, {'sessionId': 's'}, None, (), role=role, turn=turn)
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


def test_an_ingested_assistant_turn_weighs_as_much_as_what_users_said() -> None:
    # Given an assistant passage ranked above a user passage (an agent's own earlier statement ingested through /facts),
    # When fused, Then it keeps its place: the role carries no penalty (replies /chat generated are never passages)
    pool = fuse({'vector:memory_chunk': [passage('recommended', 0.7, role='assistant'), passage('said', 0.69)]})
    assert order(pool) == ['recommended', 'said']
    assert pool[0].score == pytest.approx(pool[1].score * (TUNING.rrf_k + 2) / (TUNING.rrf_k + 1))


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
    # passage leads: facts count half a passage list at the same rank (LoCoMo dev split, docs/history/bench-log.md)
    pool = fuse(
        {
            'vector:attribute': [fact('Joanna likes: hiking', 0.71)],
            'bm25:attribute': [fact('Joanna likes: hiking', 6.0)],
            'bm25:memory_chunk': [passage('Joanna: I found two new trails last weekend!', 7.0)],
        }
    )
    assert order(pool) == ['Joanna: I found two new trails last weekend!', 'Joanna likes: hiking']


@pytest.mark.parametrize(
    'question', ['When did Melanie run the charity race?', 'How long has Caroline had her friends?', 'What year did Jon move?']
)
def test_questions_about_time_are_recognised(question: str) -> None:
    # Given a question asking when or how long, When it is classified, Then it is about time
    assert asks_when(question)


@pytest.mark.parametrize('question', ['Where did Melanie run?', 'What did Caroline paint?', 'Whenever she wins, who pays?'])
def test_other_questions_are_not_about_time(question: str) -> None:
    # Given a question about where, what or 'whenever', When it is classified, Then it is not about time
    assert not asks_when(question)


@pytest.mark.parametrize(
    'text',
    ['I ran a charity race last Saturday.', 'We went camping yesterday!', 'I moved here two years ago.', 'The show is in June.',
     'Back in 2019 I lived in Rome.', 'I started a new job last week.'],
)  # fmt: skip
def test_a_turn_that_says_when_is_dated(text: str) -> None:
    # Given a turn with a time expression, When it is checked, Then it is dated
    assert is_dated(text)


@pytest.mark.parametrize('text', ['I may join the race.', 'We march for what we believe.', 'The kids loved the lake.'])
def test_a_turn_without_a_time_expression_is_not_dated(text: str) -> None:
    # Given a turn without a time expression, When it is checked, Then it is not dated.
    # "may" and "march" are mostly verbs: a month name only when it cannot be one
    assert not is_dated(text)


def dated_and_fond() -> list[Hit]:
    fond = passage('Melanie: Camping is our family thing, we love camping.', 0.030)
    return [fond, passage('Melanie: We went camping last weekend.', 0.020)]


def test_a_question_about_time_ranks_the_dated_passage_first() -> None:
    # Given a passage about camping and a weaker one that says when, When a "when" question reranks them, Then the dated
    # one scores dated_passage_weight times its score and leads
    pool = reranked(dated_and_fond(), 'When did Melanie go camping?')
    assert order(pool) == ['Melanie: We went camping last weekend.', 'Melanie: Camping is our family thing, we love camping.']
    assert pool[0].score == pytest.approx(0.020 * TUNING.dated_passage_weight)


def test_other_questions_keep_the_fused_order() -> None:
    # Given the same two passages, When a question not about time reranks them, Then order and scores stay as fused
    pool = reranked(dated_and_fond(), 'Where did Melanie go camping?')
    assert order(pool) == ['Melanie: Camping is our family thing, we love camping.', 'Melanie: We went camping last weekend.']
    assert [h.score for h in pool] == [0.030, 0.020]


def test_a_dated_fact_is_not_weighted_as_a_dated_passage() -> None:
    # Given a fact whose value says when and an undated passage, When a time question reranks them, Then neither moves:
    # the rule finds the turn that dates an event; a fact's own time is its validity, not what the turn said
    pool = reranked([fact('Melanie trip: camping last weekend', 0.010), passage('Melanie: camping again', 0.015)], 'When did Melanie camp?')
    assert [h.score for h in pool] == [0.015, 0.010]


def test_a_fact_adds_its_score_to_the_passage_it_was_extracted_from() -> None:
    # Given a question turn ranked above the statement a fact was extracted from, When reranked, Then the statement
    # gains the fact's score and leads; the fact keeps its own score and place
    asked = passage('Melanie: Do you still love pottery?', 0.030, turn='t1')
    said = passage('Caroline: I love pottery.', 0.025, turn='t2')
    likes = fact('Caroline likes: pottery', 0.012, turn='t2')
    pool = reranked([asked, said, likes], 'Which pottery does Caroline like?')
    assert order(pool) == ['Caroline: I love pottery.', 'Melanie: Do you still love pottery?', 'Caroline likes: pottery']
    assert pool[0].score == pytest.approx(0.025 + 0.012 * TUNING.source_credit) and pool[2].score == 0.012


def test_a_fact_whose_passage_is_not_in_the_pool_adds_no_row() -> None:
    # Given a fact extracted from a turn whose passage the caller did not get (not visible, or not retrieved), When
    # reranked, Then no passage joins and no score changes: the credit only moves between rows already found
    pool = reranked([passage('Melanie: hi', 0.02, turn='t1'), fact('Caroline likes: pottery', 0.01, turn='t9')], 'What does Caroline like?')
    assert [(h.text, h.score) for h in pool] == [('Melanie: hi', 0.02), ('Caroline likes: pottery', 0.01)]
