"""/chat split by stage, each at its own level: the question's visibility, what composition may quote, the cache hit
as an answer, the stored citations and the reply body. The stages that read or write the store are covered through
handler events in tests/integration/test_chat_extractive.py and test_response_cache.py."""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent_memory.domain.auth import Caller
from agent_memory.domain.chat import CHAT_K, Answer, Question, cached_answer, citations, compose, reply_body
from agent_memory.domain.context_config import ContextConfig
from agent_memory.domain.response_cache import CachedAnswer, CacheDecision
from agent_memory.domain.retrieval import Hit, Retrieval
from agent_memory.domain.synthesis import MAX_SOURCES, Composition, ExtractiveComposer
from agent_memory.domain.write_target import WriteTarget
from agent_memory.models import ChatRequest
from agent_memory.rows.conversation import TurnRow
from agent_memory.write_ops import ResponseTrace, RetrievalTrace, WritePlan, WriteTraces

NOW = dt.datetime(2026, 1, 2, tzinfo=dt.UTC)
SELF = 'person/self:alice'
CALLER = Caller('ctx', 'alice', 'Alice', 'human', {'memory:read': ['*'], 'memory:write': ['*']}, [['/']], ContextConfig())
MISS = CacheDecision(True, None, 'cache miss: nothing')


def _fact(n: int, refs: tuple[str, ...] = ('person/bob',), text: str = 'Bob location: Oslo') -> Hit:
    resource = {'kind': 'attribute', 'entityType': 'person', 'name': 'Bob', 'key': 'location'}
    return Hit(f'attribute:a{n}', 'attribute', 1.0 / n, text, None, resource, None, refs, key=f'a{n}')


def _passage(n: int, turn: str, text: str, role: str = 'user') -> Hit:
    return Hit(f'memory_chunk:{turn}_0', 'memory_chunk', 1.0 / n, text, None, {'turnId': turn}, None, (), role=role, key=f'{turn}_0')


def _question(text: str) -> Question:
    return Question(text, [0.0], None, 'shared-fp', 'personal-fp', frozenset({SELF}))


def _retrieval(hits: list[Hit]) -> Retrieval:
    return Retrieval(hits, [], [], hits, [0.0], 1.0, 'hybrid: n candidates')


def test_an_answer_is_personal_when_the_question_or_what_it_was_built_from_is_about_the_caller() -> None:
    # Given compositions built from Bob's fact, from the caller's own fact, or having read a caller source, When a question's visibility is
    # chosen, Then it is personal for a first-person question or any caller source, and shared otherwise
    about_bob = Composition('Bob lives in Oslo [S1].', [('[S1]', _fact(1))], None)
    about_alice = Composition('You live in Oslo [S1].', [('[S1]', _fact(1, (SELF,)))], None)
    assert _question('where does Bob live?').visibility(about_bob) == 'shared-fp'
    assert _question('where do I live?').visibility(about_bob) == 'personal-fp'  # first person
    assert _question('where does she live?').visibility(about_alice) == 'personal-fp'  # built on the caller's self entity
    read_only = Composition('Bob lives in Oslo.', [], None, read_sources=[_fact(2, (SELF,))])
    assert _question('where does Bob live?').visibility(read_only) == 'personal-fp'  # a source a model read counts too


def test_composition_never_quotes_the_window_or_the_users_own_questions_and_is_capped() -> None:
    # Given retrieval whose top k holds the user's earlier question and a turn already in the window above many facts,
    # and tier-1 rows that did not make the top k
    window_turn = TurnRow(id='t-window', session_key='alice/s', seq=1, role='user', content='Bob moved to Oslo', observed_at=NOW,
                          scope_sets=[['/']])  # fmt: skip
    asked = _passage(1, 't-asked', 'where does Bob live?')
    in_window = _passage(2, 't-window', 'Bob moved to Oslo')
    facts = [_fact(n + 3) for n in range(CHAT_K + 3)]
    tier1 = [_fact(n + 100) for n in range(3)]
    pool = [asked, in_window, *facts]
    retrieval = Retrieval(pool[:CHAT_K], tier1, [], pool, [0.0], 1.0, 'hybrid: n candidates')
    seen: list[list[str]] = []

    class Recording(ExtractiveComposer):
        def compose(
            self,
            question: str,
            sources: Any,
            transcript: Any,
            model: Any,
            system: str = '',
            caller_refs: Any = frozenset(),
            instructions: Any = (),
        ) -> Any:
            seen.append([h.id for h in sources])
            assert caller_refs == frozenset({SELF}) and model == CALLER.config.models.synthesis
            return super().compose(question, sources, transcript, model, caller_refs=caller_refs, instructions=instructions)

    request = ChatRequest.model_validate({'message': 'where does Bob live?'})
    answer = compose(Recording(), CALLER, request, _question(request.message), MISS, retrieval, [window_turn])
    # Then neither is a source nor takes a place of the top k (the next facts do), the sources are capped, and the
    # answer is cacheable (built from facts, eligible)
    assert seen == [[h.id for h in [*facts[:CHAT_K], *tier1][:MAX_SOURCES]]]
    assert answer.tier == 3 and answer.cacheable and answer.reused_from is None
    assert answer.reason == 'cache miss: nothing; hybrid: n candidates'


def test_an_answer_built_from_nothing_is_never_cacheable() -> None:
    # Given retrieval that found nothing, When an answer is composed, Then it cites nothing and is not cacheable
    request = ChatRequest.model_validate({'message': 'what is the meaning of life?'})
    answer = compose(ExtractiveComposer(), CALLER, request, _question(request.message), MISS, _retrieval([]), [])
    assert answer.composition.cited == [] and not answer.cacheable


def test_a_cache_hit_answers_at_tier_2_with_the_cached_reply_and_is_not_cached_again() -> None:
    # Given a cache decision holding a hit, When it becomes the answer, Then it is tier 2, reuses the cached reply and citations, and is not
    # cacheable again
    cited = [{'marker': '[S1]', 'id': 'attribute:a1', 'table': 'attribute', 'key': 'a1', 'snippet': 'Bob home city: Oslo'}]
    read = [{'table': 'memory_chunk', 'key': 'c1'}]
    scopes = {'attribute:a1': [['team:a']], 'memory_chunk:c1': [['team:b']]}  # read with the answer's validity, by wire ref
    hit = CachedAnswer('r1', 't1', 0.97, 'Bob lives in Oslo [S1].', cited, None, read, scopes)
    answer = cached_answer(CacheDecision(True, hit, 'cache hit: same question'))
    assert (answer.tier, answer.reused_from, answer.cacheable, answer.retrieval) == (2, 'r1', False, None)
    assert answer.composition.reply == 'Bob lives in Oslo [S1].' and [h.id for _, h in answer.composition.cited] == ['attribute:a1']
    # And each source carries its own scope sets, so the stored reply is scoped no wider than they are
    assert [h.scope_sets for _, h in answer.composition.cited] == [[['team:a']]]
    assert [(h.id, h.scope_sets) for h in answer.composition.read_sources] == [('memory_chunk:c1', [['team:b']])]


def test_stored_citations_carry_what_validity_needs_and_the_body_shows_only_the_wire_form() -> None:
    # Given a composition citing Bob's fact, When its citations are stored and the reply body is built, Then the stored form keeps table,
    # key and entity refs while the body carries the trace ids and only the wire fields
    composition = Composition('Bob lives in Oslo [S1].', [('[S1]', _fact(1))], None)
    stored = citations(composition)
    assert stored[0]['table'] == 'attribute' and stored[0]['key'] == 'a1' and stored[0]['entity_refs'] == ['person/bob']
    target = WriteTarget(None, 'alice/sess_1', 'sess_1', [['/']], NOW, None)
    response = ResponseTrace('resp1', 'chat', 'q', composition.reply, None, None, 1.0, False, True, stored, 'fp', 'alice', NOW)
    trace = RetrievalTrace('ret1', 'q', None, 'hybrid', 3, 'r', [], [], 1.0, 'fp', 'alice/sess_1', 'alice', None, ['/'], 'chat', None, NOW)
    plan = WritePlan(NOW, 'alice/sess_1', [WriteTraces(trace, response)])
    answer = Answer(composition, None, 3, 'r', None, True)
    body = reply_body(target, plan, answer, 'turn1', reply_stored=True, queued=False)
    assert body['traceId'] == 'response_trace:resp1' and body['retrievalTraceId'] == 'retrieval_trace:ret1'
    assert body['sessionId'] == 'sess_1' and body['tier'] == 'hybrid' and body['cached'] is False
    assert body['memoryUpdates'] == {'turnId': 'turn1', 'status': 'stored', 'replyStored': True}
    assert set(body['citations'][0]) == {'marker', 'id', 'kind', 'snippet', 'score', 'role'}
