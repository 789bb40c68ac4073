"""GET /traces, /traces/{id}, /traces/stats (CONTRACT §10).

Who sees what: a caller with ``grant:manage`` over the whole context sees every trace; any other
caller sees the traces its own principal produced (traces hold query text, so they are never
shared across principals by default). The same rule bounds ``reusedBy``: two principals with the same
readable region share cached answers, but each sees only the reuses it made itself.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import replace
from typing import Any

from agent_memory.clock import parse_rfc3339, utcnow, when
from agent_memory.domain.auth import Caller
from agent_memory.domain.params import parse_int
from agent_memory.domain.ports import TraceHistory
from agent_memory.domain.scopes import covered
from agent_memory.errors import BadRequest, NotFound
from agent_memory.rows.refs import key_of
from agent_memory.rows.traces import DecisionTraceRow, ResponseTraceRow, RetrievalTraceRow, public_citation

MAX_WINDOW_HOURS = 24 * 365
TRACE_TABLES = ('retrieval_trace', 'response_trace', 'decision_trace')
TIER_NAMES = {1: 'direct', 2: 'cache', 3: 'hybrid'}  # a retrieval trace's tier_entered


def _principal_filter(caller: Caller) -> str | None:
    return None if covered(caller.patterns('grant:manage'), '*') else caller.principal_id


def _response(row: ResponseTraceRow | None) -> dict[str, Any] | None:
    if row is None:
        return None
    return {
        'id': row.ref,
        'userMessage': row.message,
        'responseText': row.reply,
        'cached': row.cached,
        'reusedFrom': row.reused_from,
        'cacheEligible': row.cache_eligible,
        'citations': [public_citation(c) for c in row.cited],
        'model': row.model,
        'tokens': row.tokens,
        'sessionId': row.session_id,
        'latencyMs': row.latency_ms,
        'createdAt': when(row.created_at),
    }


def _returned(item: dict[str, Any]) -> dict[str, Any]:
    """A returned row on the wire: ``occurredAt`` is when it was said (a passage's turn ``ts``) or became known."""
    out = {k: v for k, v in item.items() if k != 'occurred_at'}
    if 'occurred_at' in item:
        out['occurredAt'] = when(item['occurred_at'])
    return out


def _record(row: RetrievalTraceRow) -> dict[str, Any]:
    parent = row.answer
    return {
        'id': row.ref,
        'queryText': row.query,
        'endpoint': row.endpoint,
        'resolutionTier': TIER_NAMES.get(row.tier_entered, str(row.tier_entered)),
        'tierEntered': row.tier_entered,
        'tierReason': row.tier_reason,
        'cached': bool(parent and parent.cached),
        'latencyMs': row.latency_ms,
        'createdAt': when(row.created_at),
        'sessionId': row.session_id,
        'source': row.source,
        'parent': _response(parent),
        'retrievals': [
            {
                'id': row.ref,
                'mode': row.mode,
                'tierEntered': row.tier_entered,
                'tierReason': row.tier_reason,
                'latencyMs': row.latency_ms,
                'retrievedIds': [r['id'] for r in row.returned],
                'scores': [r['score'] for r in row.returned],
                'returned': [_returned(r) for r in row.returned],
                'createdAt': when(row.created_at),
            }
        ],
    }


def list_traces(traces: TraceHistory, caller: Caller, limit: int, before: str | None) -> dict[str, Any]:
    try:
        cursor = parse_rfc3339(before) if before else None
    except (ValueError, TypeError) as exc:
        raise BadRequest('invalid cursor') from exc
    rows = traces.recent(_principal_filter(caller), limit + 1, cursor)
    page = rows[:limit]
    next_cursor = when(page[-1].created_at) if len(rows) > limit and page else None
    return {'traces': [_record(r) for r in page], 'page': {'hasMore': len(rows) > limit, 'nextCursor': next_cursor}}


def _decision(row: DecisionTraceRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'kind': 'decision',
        'turnId': row.turn,
        'input': row.input,
        'outcomes': row.outcomes,
        'latencyMs': row.latency_ms,
        'createdAt': when(row.created_at),
    }


def get_trace(traces: TraceHistory, caller: Caller, trace_ref: str) -> dict[str, Any]:
    """A trace with its one-hop neighbourhood: its retrieval/response pair, what it reused and who reused it."""
    table, _, key = trace_ref.rpartition(':')
    owner = _principal_filter(caller)
    for candidate in [table] if table else TRACE_TABLES:
        row = traces.get(candidate, key)
        if row is None or (owner is not None and row.principal != owner):
            continue
        if isinstance(row, DecisionTraceRow):
            return _decision(row)
        if isinstance(row, ResponseTraceRow):
            found = traces.get('retrieval_trace', key_of(row.retrieval_trace)) if row.retrieval_trace else None
            if not isinstance(found, RetrievalTraceRow):
                return {'id': row.ref, 'kind': 'response', 'parent': _response(row), 'retrievals': [], 'reusedBy': []}
            row = found
        record = _record(_with_response(traces, row))
        # only the reuses the caller could open itself: another principal's hit is its activity, not this caller's
        reused = traces.reused_by(key_of(record['parent']['id']), owner) if record['parent'] else []
        record['reusedBy'] = [{'id': r.ref, 'createdAt': when(r.created_at), 'latencyMs': r.latency_ms} for r in reused]
        record['kind'] = 'retrieval'
        return record
    raise NotFound('trace not found')


def _with_response(traces: TraceHistory, row: RetrievalTraceRow) -> RetrievalTraceRow:
    if row.answer is None and row.response is not None:
        answer = traces.get('response_trace', key_of(row.response))
        if isinstance(answer, ResponseTraceRow):
            return replace(row, answer=answer)
    return row


def stats(traces: TraceHistory, caller: Caller, window_hours: str | None) -> dict[str, Any]:
    hours = parse_int(window_hours, 'windowHours', 1, MAX_WINDOW_HOURS, 24)
    since = utcnow() - dt.timedelta(hours=hours)
    raw = traces.stats(_principal_filter(caller), since)
    tiers = {TIER_NAMES.get(tier, str(tier)): n for tier, n, _ in raw.tiers}
    total = sum(n for _, n, _ in raw.tiers)
    latency = sum((avg_ms or 0.0) * n for _, n, avg_ms in raw.tiers) / total if total else 0.0
    cached = sum(n for was_cached, n in raw.responses if was_cached)
    responses = sum(n for _, n in raw.responses)
    return {
        'windowHours': hours,
        'totalQueries': total,
        'avgLatencyMs': round(latency, 3),
        'cacheHits': cached,
        'responseTracesCached': cached,
        'responseTracesTotal': responses,
        'cacheHitRate': round(cached / responses, 6) if responses else 0.0,
        'tierCounts': {name: tiers.get(name, 0) for name in TIER_NAMES.values()},
        'endpoints': dict(raw.endpoints),
    }
