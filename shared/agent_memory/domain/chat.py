"""POST /chat (CONTRACT §7.2, §8) as a pipeline: authorise → window → cache → retrieve → compose → commit → reinforce.

Tier 2 (the cache) is consulted first; on a miss tier 1 seeds tier 3 retrieval and synthesis. After a reply (fresh or
cached) one transaction stores the user turn (queued for extraction), the assistant turn (``infer: none``), the
retrieval trace, the response trace and the reinforcement of what the reply cited. A failed synthesis raises before
anything is written. The assistant turn is stored no more visible than every row the reply was built from
(``derived_scope``); when no such scope lies in the caller's write region it is not stored.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.domain import question_key as question_keys
from agent_memory.domain import recall, transcript
from agent_memory.domain.answer_phrasing import is_asked_question
from agent_memory.domain.asked import PET_KEYS, asked, relation_labels, species_of
from agent_memory.domain.auth import Caller
from agent_memory.domain.commit import commit
from agent_memory.domain.derived_scope import derived_scope, reply_sources
from agent_memory.domain.entity_keys import self_entity_ref
from agent_memory.domain.pipeline import Pipeline, enqueue
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.question_key import QuestionKey
from agent_memory.domain.response_cache import CacheDecision, consult_cache
from agent_memory.domain.response_trace import response_trace
from agent_memory.domain.retrieval import Hit, Retrieval, RetrievalRequest, Retriever, fact_refs, is_first_person, to_hit
from agent_memory.domain.synthesis import MAX_SOURCES, Composer, Composition, citation_wire
from agent_memory.domain.turns import chunks_for, new_turn
from agent_memory.domain.visibility import fingerprint, personal_fingerprint
from agent_memory.domain.write_target import WriteTarget, write_target
from agent_memory.embeddings import Embedder
from agent_memory.errors import run_with_retry
from agent_memory.models import ChatRequest
from agent_memory.observability import metrics
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.directives import InstructionRow
from agent_memory.rows.reads import ReadFilter
from agent_memory.rows.traces import public_citation
from agent_memory.vocabulary import normalise_name
from agent_memory.write_ops import Reinforce, WritePlan, WriteTraces

CHAT_K = 10


@dataclass
class ChatResult:
    body: dict[str, Any]
    deltas: list[str]


@dataclass(frozen=True)
class Question:
    """The message as the cache and retrieval see it, and the visibilities an answer to it may be shared at."""

    text: str
    vector: list[float]
    key: QuestionKey | None
    shared: str  # the fingerprint of everything the caller can read
    personal: str  # the same, for answers only this principal may be served
    self_refs: frozenset[str]  # the caller's self entity

    def visibility(self, composition: Composition) -> str:
        """An answer built on the caller's self entity (a first-person question, or a fact about the caller it cites or a
        model read, which the reply may phrase as "your …") is reusable only by this principal."""
        about_caller = is_first_person(self.text) or any(self.self_refs & set(hit.entity_refs) for hit in composition.built_from)
        return self.personal if about_caller else self.shared


@dataclass(frozen=True)
class Answer:
    composition: Composition
    retrieval: Retrieval | None  # None when the cache answered
    tier: int  # 2 cache, 3 hybrid
    reason: str
    reused_from: str | None  # the cached response trace served
    cacheable: bool  # a later call may be served this answer


def chat(
    store: MemoryWrites, embedder: Embedder, composer: Composer, pipeline: Pipeline, caller: Caller, request: ChatRequest
) -> ChatResult:
    started = time.perf_counter()
    target = write_target(store, caller, request.session_id, request.scopes, utcnow())
    window, has_prior_turns = conversation_window(store, caller, target)
    question = ask(embedder, caller, request)
    decision = consult_cache(store, caller.config.response_cache, request, has_prior_turns, [question.shared, question.personal],
                             question.vector, question.key, target.now)  # fmt: skip
    if decision.hit is not None:
        answer = cached_answer(decision)
    else:
        retrieval = retrieve(store, embedder, caller, request, question, target.now)
        structured = addressed(store, caller, request.message, target.now, request.labels)
        instructions = store.active_instructions(caller.patterns('memory:read'), target.now)
        answer = compose(composer, caller, request, question, decision, with_structured(retrieval, structured), window, instructions)
    latency_ms = (time.perf_counter() - started) * 1000
    plan, user_turn_id, reply_stored = record(store, caller, pipeline, request, target, window, question, answer, latency_ms)
    plan.add(Reinforce(fact_refs([hit for _, hit in answer.composition.cited])))
    run_with_retry(lambda: commit(store, pipeline.embedder, plan))
    if pipeline.queue is not None:
        enqueue(store, caller.context_id, pipeline, [user_turn_id])
    return ChatResult(reply_body(target, plan, answer, user_turn_id, reply_stored, queued=pipeline.queue is not None),
                      answer.composition.deltas or [answer.composition.reply])  # fmt: skip


def conversation_window(store: MemoryWrites, caller: Caller, target: WriteTarget) -> tuple[list[TurnRow], bool]:
    """The session's recent turns the caller may read, and whether the conversation is under way (a new session is not)."""
    if target.session is None:
        return [], False
    window = transcript.window(store, target.session_key, caller.patterns('memory:read'))
    return window, bool(window) or transcript.has_turns(store, target.session_key)


def ask(embedder: Embedder, caller: Caller, request: ChatRequest) -> Question:
    shared = fingerprint(caller, None, request.labels)
    personal = personal_fingerprint(shared, caller.principal_id)
    vector = embedder.embed([request.message])[0]
    key = question_keys.question_key(request.message)
    return Question(request.message, vector, key, shared, personal, frozenset({self_entity_ref(caller.principal_id)}))


def cached_answer(decision: CacheDecision) -> Answer:
    assert decision.hit is not None
    metrics.add_metric(name='CacheHit', unit='Count', value=1)
    return Answer(decision.composition(), None, 2, decision.reason, decision.hit.response_id, cacheable=False)


def retrieve(
    store: MemoryWrites, embedder: Embedder, caller: Caller, request: ChatRequest, question: Question, now: dt.datetime
) -> Retrieval:
    metrics.add_metric(name='CacheMiss', unit='Count', value=1)
    where = ReadFilter(caller.patterns('memory:read'), now, labels=tuple(request.labels))
    return Retriever(store, embedder).run(RetrievalRequest(request.message, CHAT_K, 'hybrid', where, caller.principal_id), question.vector)


def compose(
    composer: Composer,
    caller: Caller,
    request: ChatRequest,
    question: Question,
    decision: CacheDecision,
    retrieval: Retrieval,
    window: list[TurnRow],
    instructions: Sequence[InstructionRow] = (),
) -> Answer:
    """Synthesis over what retrieval found, minus what the transcript window already holds and questions the user asked,
    following the caller's active instructions."""
    retrieval = usable(retrieval, {t.id for t in window})
    sources = (retrieval.hits + retrieval.context_hits)[:MAX_SOURCES]
    model = request.model or caller.config.models.synthesis
    composition = composer.compose(
        request.message, sources, window, model, caller_refs=question.self_refs, instructions=instructions
    )  # raises before any write
    # An answer built from nothing has nothing a later write could invalidate it by: never cached.
    cacheable = decision.eligible and bool(composition.built_from)
    return Answer(composition, retrieval, 3, f'{decision.reason}; {retrieval.tier_reason}', None, cacheable)


def with_structured(retrieval: Retrieval, structured: list[Hit]) -> Retrieval:
    """The tier-1 rows first among the context hits (and out of the hits, where retrieval ranked them too)."""
    if not structured:
        return retrieval
    ids = {h.id for h in structured}
    hits = [h for h in retrieval.hits if h.id not in ids]
    rest = [h for h in retrieval.context_hits if h.id not in ids]
    return replace(retrieval, hits=structured + hits, context_hits=rest, pool=structured + [h for h in retrieval.pool if h.id not in ids])


def addressed(store: MemoryWrites, caller: Caller, question: str, now: dt.datetime, labels: Sequence[str]) -> list[Hit]:
    """Tier 1 for a question that names a fact (``domain/asked.py``): the asker's or the named entity's relation and
    attributes it asks for, read straight from current memory, so an answer does not depend on their rank."""
    a = asked(question)
    if not (a.keys or a.relation):
        return []
    owners = [self_entity_ref(caller.principal_id)]
    owners += [f'{t}/{normalise_name(name)}' for name in (*a.names, *([a.owner] if a.owner else [])) for t in ('person', 'other')]
    word = a.relation or ('pet' if a.keys <= PET_KEYS else None)
    keys = set(a.keys) | ({'occupation'} if 'title' in a.keys else set()) | ({'species'} if word and species_of(word) else set())
    where = ReadFilter(caller.patterns('memory:read'), now, labels=tuple(labels))
    found = store.search().addressed(where, owners, sorted(relation_labels(word)) if word else [], sorted(keys))
    return [to_hit(row) for row in found]


def usable(retrieval: Retrieval, in_window: set[str]) -> Retrieval:
    """The top ``CHAT_K`` of the fused pool that can be evidence: the user's own earlier questions and the turns the
    transcript window already holds are dropped *before* the cut, so that a user who has asked many similar questions
    ("what is my …?") still gets the facts ranked below them (cut first, they filled all ``CHAT_K`` places)."""

    def evidence(hit: Hit) -> bool:
        return hit.resource.get('turnId') not in in_window and not is_asked_question(hit)

    hits = [h for h in retrieval.pool if evidence(h)][:CHAT_K]
    shown = {h.id for h in hits}
    return replace(retrieval, hits=hits, context_hits=[h for h in retrieval.context_hits if evidence(h) and h.id not in shown])


def citations(composition: Composition) -> list[dict[str, Any]]:
    """The reply's citations as stored: the wire form plus what cache validity needs (``public_citation`` strips it)."""
    return [
        citation_wire(marker, hit) | {'table': hit.table, 'key': hit.key, 'entity_refs': list(hit.entity_refs)}
        for marker, hit in composition.cited
    ]


def record(
    store: MemoryWrites,
    caller: Caller,
    pipeline: Pipeline,
    request: ChatRequest,
    target: WriteTarget,
    window: list[TurnRow],
    question: Question,
    answer: Answer,
    latency_ms: float,
) -> tuple[WritePlan, str, bool]:
    """The commit's plan: the user turn, the reply turn where a scope can keep it, and both traces."""
    metrics.add_metric(name=f'Tier{answer.tier}', unit='Count', value=1)
    plan, composition = target.plan(), answer.composition
    status = 'queued' if pipeline.queue is not None else None
    user_turn = new_turn(caller, 'user', request.message, target.session_key, target.scope_sets, target.now, status=status, origin='chat')
    plan.add(user_turn, *chunks_for(user_turn, request.labels))
    reply_scope = derived_scope(store, target.scope_sets, reply_sources(composition, window), caller.patterns('memory:write'))
    if reply_scope is not None:
        # the transcript keeps the reply; it is never a passage (CONTRACT §7.1: /chat never feeds on itself)
        plan.add(new_turn(caller, 'assistant', composition.reply, target.session_key, reply_scope, target.now, origin='chat_reply'))
    plan.add(traces(caller, request, target, question, answer, latency_ms))
    return plan, user_turn.id, reply_scope is not None


def traces(caller: Caller, request: ChatRequest, target: WriteTarget, question: Question, answer: Answer, latency_ms: float) -> WriteTraces:
    composition, visibility = answer.composition, question.visibility(answer.composition)
    returned: list[Hit] = [hit for _, hit in composition.cited] if answer.retrieval is None else answer.retrieval.hits
    # Only a servable answer's question vector goes into the HNSW index: a hit's or an unservable answer's would cost an
    # index insert per call and crowd the servable ones out of the cache lookup's unfiltered top-k.
    vector = question.vector if answer.cacheable else None
    retrieval_trace = recall.trace_row(
        caller, request.message, answer.retrieval, mode='hybrid', tier=answer.tier, reason=answer.reason, fingerprint_=visibility,
        endpoint='chat', now=target.now, latency_ms=latency_ms, vector=vector, returned=returned,
        session_id=target.session_key, trace_id=new_id(),
    )  # fmt: skip
    # Only answers that may be served carry a key, so the key index holds no hits or uncacheable traces to walk past.
    key = str(question.key) if question.key and answer.cacheable else None
    retrieval_trace = replace(retrieval_trace, cache_eligible=answer.cacheable, question_key=key)
    response = response_trace(new_id(), 'chat', caller, request.message, composition, citations(composition), fingerprint=visibility,
                              latency_ms=latency_ms, now=target.now, cache_eligible=answer.cacheable, reused_from=answer.reused_from,
                              session_key=target.session_key)  # fmt: skip
    return WriteTraces(retrieval_trace, response)


def reply_body(
    target: WriteTarget, plan: WritePlan, answer: Answer, user_turn_id: str, reply_stored: bool, *, queued: bool
) -> dict[str, Any]:
    written = next(plan.of(WriteTraces))
    assert written.response is not None
    cached = answer.reused_from is not None
    return {
        'reply': answer.composition.reply,
        'sessionId': target.session_id,
        'traceId': f'response_trace:{written.response.id}',
        'retrievalTraceId': f'retrieval_trace:{written.retrieval.id}',
        'cached': cached,
        'tier': 'cache' if cached else 'hybrid',
        'citations': [public_citation(dict(c)) for c in written.response.cited],
        'memoryUpdates': {'turnId': user_turn_id, 'status': 'queued' if queued else 'stored', 'replyStored': reply_stored},
    }


def suppress_markers(body: dict[str, Any]) -> dict[str, Any]:
    """``suppressMarkers``: strip ``[S1]`` markers from the reply text; citations are still returned."""
    return {**body, 'reply': re.sub(r'\s*\[S\d{1,3}\]', '', body['reply'])}
