"""Every step of the tier-2 cache decision (CONTRACT §8), without a database: admission, near misses, validity, reasons."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.domain.context_config import ResponseCacheConfig
from agent_memory.domain.question_key import question_key
from agent_memory.domain.response_cache import admission, choose
from agent_memory.models import ChatRequest
from agent_memory.rows.traces import CacheCandidate, ResponseTraceRow

ON = ResponseCacheConfig()
THRESHOLD = ON.similarity_threshold


def _request(**fields: Any) -> ChatRequest:
    return ChatRequest.model_validate({'message': 'where does Alice live?', **fields})


def _candidate(trace: str, question: str, similarity: float = 0.95) -> CacheCandidate:
    key = question_key(question)
    answer = ResponseTraceRow(ref=f'response_trace:r-{trace}', reply=f'reply {trace}', created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    return CacheCandidate(retrieval_id=trace, question_key=str(key) if key else None, similarity=similarity, answer=answer, query=question)


@pytest.mark.parametrize(
    ('config', 'fields', 'prior_turns', 'eligible', 'reason'),
    [
        (ResponseCacheConfig(enabled=False), {}, False, False, 'cache disabled for this context'),
        (ON, {'bypassCache': True}, False, True, 'bypassCache requested'),  # not served, but its answer may seed the cache
        (ON, {'bypassCache': True}, True, False, 'bypassCache requested'),
        (ON, {'model': 'big'}, False, False, 'per-call model: not served from or stored in the cache'),
        (ON, {}, True, False, 'session has prior turns: fresh answer, not cached'),
    ],
)
def test_a_call_that_may_not_be_served_is_decided_without_looking(
    config: ResponseCacheConfig, fields: dict[str, Any], prior_turns: bool, eligible: bool, reason: str
) -> None:
    # Given a disabled cache, bypassCache, a per-call model or prior turns, When admission decides, Then it decides with no hit, giving the
    # expected eligibility and reason
    decision = admission(config, _request(**fields), prior_turns)
    assert decision is not None and decision.hit is None
    assert (decision.eligible, decision.reason) == (eligible, reason)


def test_a_plain_first_call_looks_in_the_cache() -> None:
    # Given an enabled cache and a first call without options, When admission decides, Then it leaves the decision to the cache lookup
    assert admission(ON, _request(), has_prior_turns=False) is None


def test_the_first_still_valid_candidate_is_served() -> None:
    # Given two candidates, best first, the best of which cites something that changed
    found = [_candidate('t1', 'where does Alice live?'), _candidate('t2', 'where does Alice live?', 0.93)]
    decision = choose(
        found,
        question_key('where does Alice live?'),
        lambda answer: None if answer.reply == 'reply t1' else {},
        THRESHOLD,
        asked='where does Alice live?',
    )
    # Then the second is served, named by its own traces
    assert decision.hit is not None and decision.eligible
    assert (decision.hit.response_id, decision.hit.retrieval_id, decision.hit.reply) == ('r-t2', 't2', 'reply t2')
    assert decision.reason == 'cache hit: same question, similarity 0.930 to retrieval_trace:t2'


def test_a_similar_but_different_question_is_a_near_miss_never_served() -> None:
    # Given an answer to "when" for a "where" question (similar text, different question)
    found = [_candidate('t1', 'when did Alice move?')]
    decision = choose(found, question_key('where did Alice move?'), lambda answer: {}, THRESHOLD, asked='where did Alice move?')
    assert decision.hit is None and decision.reason == 'cache miss: 1 similar answers ask something else'


def test_a_similar_question_answer_is_served_as_such() -> None:
    # Given a candidate answering a rewording of the question, When the cache chooses, Then it is served as a similar-question hit
    found = [_candidate('t1', 'where is Alice living these days?')]
    decision = choose(found, question_key('where does Alice live?'), lambda answer: {}, THRESHOLD, asked='where does Alice live?')
    assert decision.hit is not None and decision.reason.startswith('cache hit: similar question')


def test_misses_say_whether_answers_were_stale_or_absent() -> None:
    # Given a candidate that is no longer valid, and then no candidate, When the cache chooses, Then each miss's reason says whether the
    # answers were stale or absent
    found = [_candidate('t1', 'where does Alice live?')]
    stale = choose(found, question_key('where does Alice live?'), lambda answer: None, THRESHOLD, asked='where does Alice live?')
    assert stale.hit is None and stale.eligible and stale.reason == 'cache miss: 1 similar answers no longer valid'
    empty = choose([], question_key('where does Alice live?'), lambda answer: {}, THRESHOLD, asked='where does Alice live?')
    assert empty.reason == f'cache miss: no answer to the same question or at similarity ≥ {THRESHOLD}'


def test_a_candidate_for_another_number_name_or_relation_is_never_served() -> None:
    # Given answers to questions that differ from the asked one only in an identifier, a name or a relation word
    pairs = [
        ('balance of account 446d2?', 'balance of account 446d1?'),
        ('Who is Andreas?', 'Who is Andrea?'),
        ('Who does Ben work for?', 'Who does Ben work with?'),
        ("Who is Bob's manager?", 'Who is Bob the manager of?'),
    ]
    for asked, stored in pairs:
        decision = choose([_candidate('t1', stored, 0.99)], question_key(asked), lambda answer: {}, THRESHOLD, asked=asked)
        # Then nothing is served
        assert decision.hit is None and decision.reason == 'cache miss: 1 similar answers ask something else', (asked, stored)


def test_above_the_default_threshold_a_same_key_candidate_needs_the_similarity_too() -> None:
    found = [_candidate('t1', 'what city is Dana in?', 0.97)]
    assert choose(found, question_key('which city is Dana in?'), lambda answer: {}, 0.92, asked='which city is Dana in?').hit is not None
    assert choose(found, question_key('which city is Dana in?'), lambda answer: {}, 0.999, asked='which city is Dana in?').hit is None
