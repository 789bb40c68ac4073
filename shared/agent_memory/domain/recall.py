"""Fresh-retrieval reads: POST /query, /context, /sessions/{id}/context (CONTRACT §7.1). Never cached.

Each request writes one retrieval trace and reinforces the facts it returned in one set-based write.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.domain import sessions
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import ContextPorts, MemoryWrites
from agent_memory.domain.retrieval import FACT_SOURCES, Hit, Retrieval, RetrievalRequest, Retriever, fact_refs
from agent_memory.domain.scopes import normalise_pattern
from agent_memory.domain.visibility import fingerprint, with_lens
from agent_memory.embeddings import Embedder
from agent_memory.errors import run_with_retry
from agent_memory.models import ContextRequest, QueryRequest, ReadRequest
from agent_memory.observability import metrics
from agent_memory.rows.reads import ReadFilter
from agent_memory.write_ops import Reinforce, RetrievalTrace, TraceCandidate, TraceReturned, WritePlan, WriteTraces

TRACE_CANDIDATES = 50  # candidates kept on the trace (the pool itself may hold 256)


def lens_patterns(raw: str | list[str] | None) -> list[str] | None:
    if raw is None:
        return None
    items = raw.split(',') if isinstance(raw, str) else raw
    return [normalise_pattern(p) for p in items if p.strip()]


def reader(caller: Caller, request: ReadRequest) -> tuple[Caller, list[str] | None]:
    lens = lens_patterns(request.lens)
    return with_lens(caller, lens), lens


def read_filter(caller: Caller, now: dt.datetime, request: ReadRequest) -> ReadFilter:
    if isinstance(request, QueryRequest):
        return ReadFilter(
            caller.patterns('memory:read'),
            now,
            as_of=request.as_of,
            valid_from=request.valid_from,
            valid_until=request.valid_until,
            session_id=request.session_id,
            labels=tuple(request.labels),
        )
    return ReadFilter(caller.patterns('memory:read'), now, labels=tuple(request.labels))


def trace_row(
    caller: Caller,
    query: str,
    retrieval: Retrieval | None,
    *,
    mode: str,
    tier: int,
    reason: str,
    fingerprint_: str,
    endpoint: str,
    now: dt.datetime,
    latency_ms: float,
    vector: list[float] | None,
    returned: Sequence[Hit] = (),
    session_id: str | None = None,
    source: str | None = None,
    trace_id: str | None = None,
) -> RetrievalTrace:
    pool = retrieval.pool[:TRACE_CANDIDATES] if retrieval else []
    return RetrievalTrace(
        id=trace_id or new_id(),
        query=query,
        query_embedding=vector,
        mode=mode,
        tier_entered=tier,
        tier_reason=reason,
        candidates=[TraceCandidate(h.id, h.table, h.score, h.lists) for h in pool],
        returned=[TraceReturned(h.id, h.table, rank, h.score, h.occurred_at) for rank, h in enumerate(returned, start=1)],
        latency_ms=latency_ms,
        visibility_fingerprint=fingerprint_,
        session=session_id,  # the stored session key: the repository links the session record
        principal=caller.principal_id,
        acting_principal=caller.acting_principal_id,
        read_region=sorted(set(caller.patterns('memory:read'))),  # who may see its texts later (domain/trace_views.py)
        endpoint=endpoint,
        source=source,
        created_at=now,
    )


def fresh_trace(
    caller: Caller,
    query: str,
    retrieval: Retrieval,
    fingerprint_: str,
    endpoint: str,
    now: dt.datetime,
    *,
    mode: str = 'hybrid',
    returned: Sequence[Hit] | None = None,
    latency_ms: float | None = None,
    session_id: str | None = None,
    source: str | None = None,
) -> RetrievalTrace:
    """The trace of a tier-3 read (fresh retrieval, no cache). Like a cache hit's trace it stores no question vector
    (docs/architecture.md, Decisions, the cache lookup): only a servable answer's trace enters the HNSW index."""
    return trace_row(
        caller,
        query,
        retrieval,
        mode=mode,
        tier=3,
        reason=retrieval.tier_reason,
        fingerprint_=fingerprint_,
        endpoint=endpoint,
        now=now,
        latency_ms=retrieval.latency_ms if latency_ms is None else latency_ms,
        vector=None,  # a read's trace is never served from the cache: its vector would only crowd the lookup's KNN
        returned=retrieval.hits if returned is None else returned,
        session_id=session_id,
        source=source,
    )


def reinforce(store: MemoryWrites, hits: Sequence[Hit]) -> int:
    """×1.1 (cap 2.0) on the facts returned to the caller, in one statement (CONTRACT §5)."""
    return store.lifecycle().reinforce(fact_refs(hits))


def record(ports: ContextPorts, trace: RetrievalTrace, returned: Sequence[Hit], now: dt.datetime) -> None:
    """The read's trace and the reinforcement of the facts it returned, in one transaction (CONTRACT §5, §7.2):
    one round trip, and never a trace without its reinforcement or the reverse; retried on a write conflict."""
    plan = WritePlan(now, None, [WriteTraces(trace), Reinforce(fact_refs(returned))])
    run_with_retry(lambda: ports.memory.apply(plan))


def _record_tier(tier: int) -> None:
    metrics.add_metric(name=f'Tier{tier}', unit='Count', value=1)


def query(ports: ContextPorts, embedder: Embedder, caller: Caller, request: QueryRequest, endpoint: str = 'query') -> dict[str, Any]:
    store = ports.memory
    caller, lens = reader(caller, request)
    now = utcnow()
    where = read_filter(caller, now, request)
    session_key = sessions.readable_key(store, caller, request.session_id)
    where = replace(where, session_id=session_key)
    retrieval = Retriever(store, embedder).run(RetrievalRequest(request.query, request.k, request.mode, where, caller.principal_id))
    wanted: set[str] = set()
    if 'facts' in request.include:
        wanted |= FACT_SOURCES
    if 'passages' in request.include:
        wanted.add('memory_chunk')
    hits = [h for h in retrieval.hits if h.source in wanted]
    context_hits = [h for h in retrieval.context_hits if h.source in wanted]
    trace = fresh_trace(
        caller,
        request.query,
        retrieval,
        fingerprint(caller, lens, request.labels),
        endpoint,
        now,
        mode=request.mode,
        session_id=session_key,
        source=request.source,
    )
    record(ports, trace, retrieval.hits + retrieval.context_hits, now)  # include narrows the response only
    _record_tier(3)
    return {
        'tier': 'hybrid',
        'hits': [h.wire() for h in hits],
        'contextHits': [h.wire() for h in context_hits],
        'seedEntities': retrieval.seeds,
        'queryMs': round(retrieval.latency_ms, 2),
        'trace': {
            'traceId': f'retrieval_trace:{trace.id}',
            'resolutionTier': 'hybrid',
            'tierReason': retrieval.tier_reason,
            'latencyMs': round(retrieval.latency_ms, 2),
            'retrievedCount': len(retrieval.pool),
            'topScores': [round(h.score, 6) for h in retrieval.hits[:5]],
        },
    }


def context(ports: ContextPorts, embedder: Embedder, caller: Caller, request: ContextRequest, endpoint: str = 'context') -> dict[str, Any]:
    """A markdown block for a system prompt: instructions, profile, relevant facts and passages (no LLM)."""
    from agent_memory.domain.context_block import render_context

    caller, lens = reader(caller, request)
    now = utcnow()
    where = read_filter(caller, now, request)
    retrieval = Retriever(ports.memory, embedder).run(RetrievalRequest(request.query, request.k, 'hybrid', where, caller.principal_id))
    block = render_context(ports.reads, caller, retrieval.hits + retrieval.context_hits, now)
    trace = fresh_trace(caller, request.query, retrieval, fingerprint(caller, lens, request.labels), endpoint, now)
    record(ports, trace, retrieval.hits + retrieval.context_hits, now)
    _record_tier(3)
    return {'context': block, 'queryMs': round(retrieval.latency_ms, 2), 'tier': 'hybrid', 'traceId': f'retrieval_trace:{trace.id}'}
