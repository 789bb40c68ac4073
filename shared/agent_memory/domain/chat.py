"""POST /chat (CONTRACT §7.2, §8): tier 2 cache first, then tier 1 seeding tier 3 retrieval and synthesis.

After a reply (fresh or cached) one transaction stores the user turn (queued for extraction), the
assistant turn (``infer: none``), the retrieval trace and the response trace. A failed synthesis
raises before anything is written. The assistant turn is stored no more visible than every row the reply
was built from (``derived_scope``); when no such scope lies in the caller's write region it is not stored.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import rid
from agent_memory.db.retrieval_store import ReadFilter
from agent_memory.domain import question_key as question_keys
from agent_memory.domain import recall, sessions, transcript
from agent_memory.domain.answer_phrasing import is_asked_question
from agent_memory.domain.auth import Caller
from agent_memory.domain.derived_scope import derived_scope, reply_sources
from agent_memory.domain.facts import Pipeline, chunks_for, enqueue, session_for_write, turn_row, write_region
from agent_memory.domain.reconcile import self_entity_ref
from agent_memory.domain.response_cache import consult_cache
from agent_memory.domain.retrieval import RetrievalRequest, Retriever, fact_refs, is_first_person
from agent_memory.domain.synthesis import MAX_SOURCES, Composer, citation_wire, public_citation
from agent_memory.domain.visibility import fingerprint, personal_fingerprint
from agent_memory.domain.write_plan import WritePlan
from agent_memory.embeddings import Embedder
from agent_memory.models import ChatRequest
from agent_memory.observability import metrics

CHAT_K = 10


@dataclass
class ChatResult:
    body: dict[str, Any]
    deltas: list[str]


def chat(
    store: MemoryStore, embedder: Embedder, composer: Composer, pipeline: Pipeline, caller: Caller, request: ChatRequest
) -> ChatResult:
    started = time.perf_counter()
    now = utcnow()
    session = session_for_write(store, caller, request.session_id)
    scope_sets = write_region(caller, request.scopes, session)
    session_key, session_id, plan_session = sessions.target(caller, session, request.session_id, scope_sets, now)
    window = transcript.window(store, session_key, caller.patterns('memory:read')) if session else []
    has_prior_turns = bool(window) or (session is not None and transcript.has_turns(store, session_key))
    shared = fingerprint(caller, None, request.labels)
    personal = personal_fingerprint(shared, caller.principal_id)
    mine = frozenset({self_entity_ref(caller.principal_id)})
    vector = embedder.embed([request.message])[0]
    question = question_keys.question_key(request.message)
    model = request.model or caller.config.models.synthesis
    decision = consult_cache(store, caller.config.response_cache, request, has_prior_turns, [shared, personal], vector, question, now)

    retrieval = None
    if decision.hit is not None:
        composition = decision.composition()
        tier, reason = 2, decision.reason
        metrics.add_metric(name='CacheHit', unit='Count', value=1)
    else:
        metrics.add_metric(name='CacheMiss', unit='Count', value=1)
        where = ReadFilter(caller.patterns('memory:read'), now, labels=tuple(request.labels))
        retrieval = Retriever(store, embedder).run(RetrievalRequest(request.message, CHAT_K, 'hybrid', where, caller.principal_id), vector)
        in_window = {t.id for t in window}
        sources = [
            h for h in retrieval.hits + retrieval.context_hits if h.resource.get('turnId') not in in_window and not is_asked_question(h)
        ][:MAX_SOURCES]
        composition = composer.compose(request.message, sources, window, model, caller_refs=mine)  # raises before anything is written
        tier, reason = 3, f'{decision.reason}; {retrieval.tier_reason}'
    metrics.add_metric(name=f'Tier{tier}', unit='Count', value=1)
    # An answer built on the caller's self entity (a first-person question, or a fact about the caller it cites or a
    # model read, which the reply may phrase as "your …") is reusable only by this principal.
    about_caller = is_first_person(request.message) or any(mine & set(hit.entity_refs) for hit in composition.built_from)
    visibility = personal if about_caller else shared
    latency_ms = (time.perf_counter() - started) * 1000
    citations = [
        citation_wire(marker, hit) | {'table': hit.table, 'key': hit.key, 'entity_refs': list(hit.entity_refs)}
        for marker, hit in composition.cited
    ]
    # An answer built from nothing has nothing a later write could invalidate it by: never cached.
    cacheable = decision.eligible and decision.hit is None and bool(composition.built_from)
    response_id, retrieval_id = new_id(), new_id()
    plan = WritePlan(now=now, principal=caller.principal_id, session_id=session_key)
    plan.new_session = plan_session
    queued = pipeline.queue is not None
    user_turn = turn_row(caller, 'user', request.message, session_key, scope_sets, now, now, 'queued' if queued else None, None)
    plan.turns = [user_turn]
    plan.chunks = chunks_for(user_turn, now, request.labels)
    reply_scope = derived_scope(store, scope_sets, reply_sources(composition, window), caller.patterns('memory:write'))
    if reply_scope is not None:
        reply_turn = turn_row(caller, 'assistant', composition.reply, session_key, reply_scope, now, now, None, None)
        plan.turns.append(reply_turn)
        plan.chunks += chunks_for(reply_turn, now, request.labels)
    plan.retrieval_trace = recall.trace_row(
        caller,
        request.message,
        retrieval,
        mode='hybrid',
        tier=tier,
        reason=reason,
        fingerprint_=visibility,
        endpoint='chat',
        now=now,
        latency_ms=latency_ms,
        vector=vector,
        returned=[hit for _, hit in composition.cited] if retrieval is None else retrieval.hits,
        session_id=session_key,
        trace_id=retrieval_id,
    )
    plan.retrieval_trace['cache_eligible'] = cacheable
    plan.retrieval_trace['question_key'] = str(question) if question else None
    plan.response_trace = {
        'id': response_id,
        'message': request.message,
        'reply': composition.reply,
        'model': composition.model,
        'tokens': composition.tokens,
        'latency_ms': latency_ms,
        'cached': decision.hit is not None,
        'reused_from': rid('response_trace', decision.hit.response_id) if decision.hit else None,
        'cache_eligible': cacheable,
        'cited': citations,
        'read_sources': [{'table': hit.table, 'key': hit.key} for hit in composition.read_sources],
        'cited_entity_refs': sorted({ref for hit in composition.built_from for ref in hit.entity_refs}),  # §8: built from
        'visibility_fingerprint': visibility,
        'principal': caller.principal_id,
        'session': rid('session', session_key),
        'endpoint': 'chat',
        'created_at': now,
    }
    plan.reinforced = fact_refs([hit for _, hit in composition.cited])
    run_with_retry(lambda: store.apply(plan))
    if queued:
        enqueue(store, caller.context_id, pipeline, [user_turn['id']])
    body = {
        'reply': composition.reply,
        'sessionId': session_id,
        'traceId': f'response_trace:{response_id}',
        'retrievalTraceId': f'retrieval_trace:{retrieval_id}',
        'cached': decision.hit is not None,
        'tier': 'cache' if decision.hit is not None else 'hybrid',
        'citations': [public_citation(c) for c in citations],
        'memoryUpdates': {'turnId': user_turn['id'], 'status': 'queued' if queued else 'stored', 'replyStored': reply_scope is not None},
    }
    return ChatResult(body, composition.deltas or [composition.reply])


def suppress_markers(body: dict[str, Any]) -> dict[str, Any]:
    """``suppressMarkers``: strip ``[S1]`` markers from the reply text; citations are still returned."""
    return {**body, 'reply': re.sub(r'\s*\[S\d{1,3}\]', '', body['reply'])}
