"""The semantic response cache, one test per rule of CONTRACT §8, through the /chat handler.

Synthesis goes through the real ``openai`` client to the local OpenAI-compatible test server, so
every test can assert exactly how many times the model was called: a cache hit never calls it.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_reads import TraceReads
from agent_memory.rows.traces import ResponseTraceRow, RetrievalTraceRow
from agent_memory.write_ops import CreateUncertainty, WritePlan
from tests.support.chat import ALICE, QUESTION, chat, remember, role
from tests.support.db_snapshot import snapshot
from tests.support.handlers import MANAGEMENT_KEY, Api
from tests.support.llm_server import LlmTestServer
from tests.support.principals import make_principal
from tests.support.tuning import tune

PARAPHRASE_HIT = "What is Alice's job at Acme?"  # cosine 0.938 to QUESTION with the local model
PARAPHRASE_MISS = "Alice's job at Acme?"  # cosine 0.904
pytestmark = pytest.mark.usefixtures('llm')


def configure(api: Api, **response_cache: Any) -> None:
    mgmt = Api('unused', MANAGEMENT_KEY)
    code, body, _ = mgmt.call('contexts', 'PATCH', f'/api/v1/contexts/{api.context_id}', {'config': {'response_cache': response_cache}})
    assert code == 200, body


def similarity(services: Services, a: str, b: str) -> float:
    va, vb = services.embedder.embed([a, b])
    return sum(x * y for x, y in zip(va, vb, strict=True))


def test_repeat_question_is_served_without_the_llm_and_traced_as_tier_2(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given one answered question, When the same question is asked again, Then the stored answer is served without the
    # LLM, traced as tier 2 with what it reused and depends on, and the turns are still stored
    first = chat(seeded)
    assert llm.chat_calls == 1 and first['cached'] is False and first['tier'] == 'hybrid'
    assert any(c['snippet'] == 'Alice role: CTO' for c in first['citations'])
    second = chat(seeded)
    assert llm.chat_calls == 1
    assert second['cached'] is True and second['tier'] == 'cache' and second['reply'] == first['reply']
    assert second['citations'] == first['citations']
    response = TraceReads(store).get('response_trace', second['traceId'].split(':', 1)[1])
    retrieval = TraceReads(store).get('retrieval_trace', second['retrievalTraceId'].split(':', 1)[1])
    assert isinstance(response, ResponseTraceRow) and isinstance(retrieval, RetrievalTraceRow)
    assert response.cached is True and response.reused_from == first['traceId']
    assert retrieval.tier_entered == 2 and retrieval.tier_reason.startswith('cache hit')
    assert response.cited_entity_refs == ['person/alice']  # what the reused answer depends on
    # the hit still stores the user turn (queued for extraction) and the reply
    turns = store.rows('SELECT seq, role, extraction_status FROM turn WHERE session.client_id = $s ORDER BY seq;', s=second['sessionId'])
    assert [(t['role'], t['extraction_status']) for t in turns] == [('user', 'queued'), ('assistant', None)]


def test_paraphrase_above_the_default_threshold_hits(seeded: Api, llm: LlmTestServer, services: Services) -> None:
    # Given an answered question, When a paraphrase at similarity 0.92-0.95 is asked, Then it is served from the cache
    assert 0.92 <= similarity(services, QUESTION, PARAPHRASE_HIT) < 0.95
    chat(seeded)
    assert chat(seeded, PARAPHRASE_HIT)['cached'] is True
    assert llm.chat_calls == 1


def test_paraphrase_below_the_default_threshold_misses(seeded: Api, llm: LlmTestServer, services: Services) -> None:
    # Given an answered question, When a paraphrase at similarity 0.88-0.92 is asked, Then it misses and the LLM answers
    assert 0.88 <= similarity(services, QUESTION, PARAPHRASE_MISS) < 0.92
    chat(seeded)
    assert chat(seeded, PARAPHRASE_MISS)['cached'] is False
    assert llm.chat_calls == 2


def test_threshold_changed_per_context_is_honoured(seeded: Api, llm: LlmTestServer) -> None:
    # Given an answered question, When the context's threshold is lowered then raised, Then the near paraphrase hits and
    # the close one misses accordingly
    chat(seeded)
    configure(seeded, similarity_threshold=0.89)
    assert chat(seeded, PARAPHRASE_MISS)['cached'] is True  # 0.904 ≥ 0.89
    configure(seeded, similarity_threshold=0.99)
    assert chat(seeded, PARAPHRASE_HIT)['cached'] is False  # 0.938 < 0.99
    assert llm.chat_calls == 2


def _age_traces(store: MemoryStore, seconds: int) -> None:
    past = utcnow() - dt.timedelta(seconds=seconds)
    store.q('UPDATE retrieval_trace SET created_at = $t; UPDATE response_trace SET created_at = $t;', t=past)


def test_answer_older_than_the_freshness_window_misses(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given an answer older than the default hour, When the question is asked again, Then it misses
    chat(seeded)
    _age_traces(store, 3601)
    assert chat(seeded)['cached'] is False
    assert llm.chat_calls == 2


def test_freshness_window_changed_per_context_is_honoured(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a two-minute-old answer, When the context's window is 60 s then 600 s, Then it misses and then a fresh
    # answer is served
    chat(seeded)
    _age_traces(store, 120)
    configure(seeded, freshness_window_seconds=60)
    assert chat(seeded)['cached'] is False
    configure(seeded, freshness_window_seconds=600)
    assert chat(seeded)['cached'] is True  # the fresh answer just made is served
    assert llm.chat_calls == 2


def test_superseded_citation_skips_to_the_next_valid_candidate(api: Api, llm: LlmTestServer) -> None:
    # an older answer built only from a passage (cites no entity), to a close paraphrase
    # Given an older passage-only answer and a newer one citing Alice's role, When the role is superseded, Then the
    # newer candidate fails validation and the older one is served
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'Alice told us she leads engineering at Acme.'})
    assert code == 200, body
    configure(api, similarity_threshold=0.85)
    older = chat(api, "What's Alice's position at Acme?")
    assert {c['kind'] for c in older['citations']} == {'memory_chunk'}
    # a newer answer to the exact question that cites Alice's role
    remember(api, role('CTO'))
    newer = chat(api, bypassCache=True)
    assert any(c['kind'] == 'attribute' for c in newer['citations'])
    assert llm.chat_calls == 2
    # when the role is superseded, the best candidate fails validation and the next one is served
    remember(api, role('CEO'))
    served = chat(api)
    assert llm.chat_calls == 2
    assert served['cached'] is True and served['reply'] == older['reply']


def test_new_uncertainty_about_a_cited_entity_invalidates(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer citing Alice, When an uncertainty about Alice's role is recorded, Then the next ask misses
    chat(seeded)
    doubt = CreateUncertainty('u1', "Alice's role", 'conflicting reports', 'conflict', ('person', 'alice'), 'role', None, [['/']], utcnow())
    store.apply(WritePlan(utcnow(), None, [doubt]))
    assert chat(seeded)['cached'] is False
    assert llm.chat_calls == 2


def test_new_fact_about_a_cited_entity_invalidates(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer citing Alice, When a new fact about Alice arrives, Then the next ask misses
    chat(seeded)
    remember(seeded, {'entity': ALICE, 'key': 'city', 'value': 'Berlin'})
    assert chat(seeded)['cached'] is False
    assert llm.chat_calls == 2


def test_expired_citation_invalidates(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer citing Alice's role, When that fact expires, Then the next ask misses
    chat(seeded)
    store.q("UPDATE attribute SET valid_until = $t WHERE key = 'role';", t=utcnow() - dt.timedelta(seconds=1))
    assert chat(seeded)['cached'] is False
    assert llm.chat_calls == 2


def test_other_visibility_is_never_served(seeded: Api, llm: LlmTestServer, services: Services) -> None:
    # Given a cached answer made with read '*', When a reader with the same region and one with a narrower region ask,
    # Then only the first is served it
    chat(seeded)
    reader = make_principal(services, seeded.context_id, 'reader', {'memory:read': ['*'], 'memory:write': ['org/reader/*']}, 'org/reader')
    narrow = make_principal(services, seeded.context_id, 'narrow', {'memory:read': ['org/*'], 'memory:write': ['org/*']}, 'org')
    assert chat(reader)['cached'] is True  # same readable region ('*') → same fingerprint
    assert chat(narrow)['cached'] is False
    assert llm.chat_calls == 2


def test_labels_change_visibility(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer, When the same question is asked with labels, Then it misses (labels are part of the
    # fingerprint)
    chat(seeded)
    assert chat(seeded, labels=['topic=work'])['cached'] is False
    assert llm.chat_calls == 2


def test_bypass_cache_answers_fresh_and_may_seed(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer, When bypassCache is set, Then the LLM answers fresh, and the fresh answer serves the next
    # plain ask
    chat(seeded)
    llm.reply_text('A fresh answer [S1].')
    fresh = chat(seeded, bypassCache=True)
    assert fresh['cached'] is False and llm.chat_calls == 2
    assert chat(seeded)['cached'] is True and llm.chat_calls == 2


def test_second_turn_in_a_session_is_fresh_and_never_seeds(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer and a session with one prior turn, When the question is asked in that session, Then it is
    # answered fresh, marked not cache-eligible, and never served to a first-turn ask
    chat(seeded)
    code, session, _ = seeded.call('sessions', 'POST', '/sessions', {})
    assert code == 201
    chat(seeded, 'Hello there', sessionId=session['id'])
    llm.reply_text('Windowed answer [S1].')
    windowed = chat(seeded, sessionId=session['id'])
    assert windowed['cached'] is False and llm.chat_calls == 3
    trace = TraceReads(store).get('response_trace', windowed['traceId'].split(':', 1)[1])
    assert isinstance(trace, ResponseTraceRow) and trace.cache_eligible is False
    served = chat(seeded)  # a first-turn call is still cache-eligible, and is served the first answer
    assert served['cached'] is True and served['reply'] != 'Windowed answer [S1].'
    assert llm.chat_calls == 3


def test_per_call_model_is_fresh_and_not_stored(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer, When a per-call model is named, Then that call is fresh with that model and its answer is
    # never served from the cache
    chat(seeded)
    llm.reply_text('Model-specific answer [S1].')
    special = chat(seeded, model='special-model')
    assert special['cached'] is False and llm.chat_calls == 2
    assert llm.requests[-1].body['model'] == 'special-model'
    configure(seeded, freshness_window_seconds=3600)
    served = chat(seeded)
    assert served['cached'] is True and served['reply'] != 'Model-specific answer [S1].'
    assert llm.chat_calls == 2


def test_disabled_cache_is_never_consulted(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer, When the context disables the cache, Then the next ask misses and its trace says the cache
    # is disabled
    chat(seeded)
    configure(seeded, enabled=False)
    second = chat(seeded)
    assert second['cached'] is False and llm.chat_calls == 2
    trace = TraceReads(store).get('retrieval_trace', second['retrievalTraceId'].split(':', 1)[1])
    assert isinstance(trace, RetrievalTraceRow) and trace.tier_reason.startswith('cache disabled')


def test_unrelated_question_misses(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer, When an unrelated question is asked, Then it misses
    chat(seeded)
    assert chat(seeded, 'What is the capital of France?')['cached'] is False
    assert llm.chat_calls == 2


def test_query_context_and_reflect_never_use_the_cache(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer, When /query, /context and /reflect run, Then none reads the cache and only the reflections
    # store (uncached) response traces
    chat(seeded)
    before = store.table_counts()['response_trace']
    for route in ('/query', '/context'):
        code, body, _ = seeded.call('retrieval', 'POST', route, {'query': QUESTION})
        assert code == 200 and body['tier'] == 'hybrid'
    for _ in range(2):
        code, body, _ = seeded.call('retrieval', 'POST', '/reflect', {'query': QUESTION})
        assert code == 200 and body['reflection']
    assert llm.chat_calls == 3  # one chat + two reflections, each a fresh synthesis
    assert store.table_counts()['response_trace'] == before + 2
    assert not store.rows('SELECT id FROM response_trace WHERE cached = true;')


def test_failed_synthesis_stores_nothing(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a seeded context and a provider that fails both attempts (the composer's client retries once)
    before = snapshot(store)
    llm.error(500).error(500)
    # When /chat is asked
    code, body, _ = seeded.call('chat', 'POST', '/chat', {'message': QUESTION})
    # Then it is a 503 and only the retrieval's own trace was written: no turn, reply, session or reinforcement
    assert code == 503 and body['status'] == 503
    after = snapshot(store)
    assert {t: d for t, d in after.items() if t != 'retrieval_trace'} == {t: d for t, d in before.items() if t != 'retrieval_trace'}


def test_hit_reinforces_the_cited_facts(seeded: Api, llm: LlmTestServer, store: MemoryStore) -> None:
    # Given a cached answer citing Alice's role, When it is served again, Then the role is reinforced by 1.1
    chat(seeded)
    before = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    chat(seeded)
    after = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    assert after == pytest.approx(min(2.0, before * 1.1))


def test_a_session_with_only_a_system_turn_already_has_prior_turns(seeded: Api, llm: LlmTestServer) -> None:
    # Given a cached answer and a session holding only a system turn, When the question is asked in that session, Then
    # it is answered fresh (the system turn is a prior turn)
    chat(seeded)
    code, body, _ = seeded.call('facts', 'POST', '/facts', {'infer': 'none', 'role': 'system', 'text': 'You are a helpful assistant.'})
    assert code == 200
    assert chat(seeded, sessionId=body['sessionId'])['cached'] is False
    assert llm.chat_calls == 2


def test_hits_do_not_crowd_the_answer_they_serve_out_of_the_lookup(
    seeded: Api, llm: LlmTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an answer served again and again to a paraphrase, with the lookup examining only the 4 nearest traces
    tune(monkeypatch, cache_neighbours=4)
    chat(seeded)
    # When the paraphrase is asked more times than that
    served = [chat(seeded, PARAPHRASE_HIT)['cached'] for _ in range(6)]
    # Then every time it is served: a hit's trace holds no vector, so the hits (nearer the paraphrase than the
    # original, at distance 0) never fill the nearest traces the lookup examines
    assert served == [True] * 6 and llm.chat_calls == 1


def test_reads_of_the_same_words_do_not_crowd_the_answer_out_of_the_lookup(
    seeded: Api, llm: LlmTestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given an answer to the question, the lookup examining only the 4 nearest traces, and /query and /context asked
    # the paraphrase's exact words more times than that (each read writes a retrieval trace)
    tune(monkeypatch, cache_neighbours=4)
    chat(seeded)
    for route in ('/query', '/context', '/query', '/context', '/query'):
        code, body, _ = seeded.call('retrieval', 'POST', route, {'query': PARAPHRASE_HIT})
        assert code == 200, body
    # When the paraphrase is asked in /chat
    served = chat(seeded, PARAPHRASE_HIT)
    # Then the answer is served: the reads' traces hold no vector, so they never fill the nearest traces examined
    assert served['cached'] is True and llm.chat_calls == 1


def test_a_similar_answer_is_served_when_every_answer_to_the_same_question_is_stale(seeded: Api, llm: LlmTestServer) -> None:
    # Given an answer to the question made stale by a new fact about Alice, and a fresher answer to a paraphrase of it
    chat(seeded)
    remember(seeded, {'entity': ALICE, 'key': 'team', 'value': 'platform'})
    fresher = chat(seeded, PARAPHRASE_HIT)
    assert fresher['cached'] is False and llm.chat_calls == 2
    # When the question is asked again, Then the lookup (which skips the similarity search while the same question has
    # answers) goes on to the similar ones once those fail validity, and serves the paraphrase's answer
    again = chat(seeded)
    assert again['cached'] is True and again['reply'] == fresher['reply'] and llm.chat_calls == 2
