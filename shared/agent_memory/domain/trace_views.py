"""GET /traces, /traces/{id}, /traces/stats (CONTRACT §10).

Who sees what: a caller with ``grant:manage`` over the whole context sees every trace; any other
caller sees the traces its own principal produced (traces hold query text, so they are never
shared across principals by default).
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent_memory.clock import parse_rfc3339, utcnow, when
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import bare, ref, session_id_of
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.auth import Caller
from agent_memory.domain.params import parse_int
from agent_memory.domain.recall import TIER_NAMES
from agent_memory.domain.scopes import covered
from agent_memory.domain.synthesis import public_citation
from agent_memory.errors import BadRequest, NotFound

MAX_WINDOW_HOURS = 24 * 365


def _principal_filter(caller: Caller) -> str | None:
    return None if covered(caller.patterns('grant:manage'), '*') else caller.principal_id


def _response(row: dict[str, Any] | None) -> dict[str, Any] | None:
    if not row:
        return None
    return {
        'id': ref(row['id']),
        'userMessage': row.get('message'),
        'responseText': row.get('reply'),
        'cached': bool(row.get('cached')),
        'reusedFrom': ref(row.get('reused_from')),
        'cacheEligible': bool(row.get('cache_eligible')),
        'citations': [public_citation(c) for c in row.get('cited') or []],
        'model': row.get('model'),
        'tokens': row.get('tokens'),
        'sessionId': session_id_of(row.get('session')),
        'latencyMs': row.get('latency_ms'),
        'createdAt': when(row.get('created_at')),
    }


def _returned(item: dict[str, Any]) -> dict[str, Any]:
    """A returned row on the wire: ``occurredAt`` is when it was said (a passage's turn ``ts``) or became known."""
    out = {k: v for k, v in item.items() if k != 'occurred_at'}
    if 'occurred_at' in item:
        out['occurredAt'] = when(item['occurred_at'])
    return out


def _record(row: dict[str, Any]) -> dict[str, Any]:
    parent = row.get('response') if isinstance(row.get('response'), dict) else None
    returned = row.get('returned') or []
    return {
        'id': ref(row['id']),
        'queryText': row['query'],
        'endpoint': row.get('endpoint'),
        'resolutionTier': TIER_NAMES.get(row['tier_entered'], str(row['tier_entered'])),
        'tierEntered': row['tier_entered'],
        'tierReason': row['tier_reason'],
        'cached': bool(parent and parent.get('cached')),
        'latencyMs': row['latency_ms'],
        'createdAt': when(row['created_at']),
        'sessionId': session_id_of(row.get('session')),
        'source': row.get('source'),
        'parent': _response(parent),
        'retrievals': [
            {
                'id': ref(row['id']),
                'mode': row['mode'],
                'tierEntered': row['tier_entered'],
                'tierReason': row['tier_reason'],
                'latencyMs': row['latency_ms'],
                'retrievedIds': [r['id'] for r in returned],
                'scores': [r['score'] for r in returned],
                'returned': [_returned(r) for r in returned],
                'createdAt': when(row['created_at']),
            }
        ],
    }


def list_traces(store: MemoryStore, caller: Caller, limit: int, before: str | None) -> dict[str, Any]:
    try:
        cursor = parse_rfc3339(before) if before else None
    except (ValueError, TypeError) as exc:
        raise BadRequest('invalid cursor') from exc
    rows = TraceStore(store).recent(_principal_filter(caller), limit + 1, cursor)
    page = rows[:limit]
    next_cursor = when(page[-1]['created_at']) if len(rows) > limit and page else None
    return {'traces': [_record(r) for r in page], 'page': {'hasMore': len(rows) > limit, 'nextCursor': next_cursor}}


def get_trace(store: MemoryStore, caller: Caller, trace_ref: str) -> dict[str, Any]:
    """A trace with its one-hop neighbourhood: its retrieval/response pair, what it reused and who reused it."""
    table, _, key = trace_ref.rpartition(':')
    tables = [table] if table else ['retrieval_trace', 'response_trace', 'decision_trace']
    owner = _principal_filter(caller)
    for candidate in tables:
        row = store.get_trace(candidate, key)
        if row is None or (owner is not None and row.get('principal') != owner):
            continue
        if candidate == 'decision_trace':
            return {
                'id': ref(row['id']),
                'kind': 'decision',
                'turnId': bare(row.get('turn')),
                'input': row.get('input'),
                'outcomes': row.get('outcomes'),
                'latencyMs': row.get('latency_ms'),
                'createdAt': when(row.get('created_at')),
            }
        if candidate == 'response_trace':
            if row.get('retrieval_trace') is None:
                return {'id': ref(row['id']), 'kind': 'response', 'parent': _response(row), 'retrievals': [], 'reusedBy': []}
            row = store.get_trace('retrieval_trace', str(row['retrieval_trace'].id)) or row
        record = _record(_with_response(store, row))
        response_id = record['parent']['id'].split(':', 1)[1] if record['parent'] else None
        reused = TraceStore(store).reused_by(response_id) if response_id else []
        record['reusedBy'] = [{'id': ref(r['id']), 'createdAt': when(r['created_at']), 'latencyMs': r['latency_ms']} for r in reused]
        record['kind'] = 'retrieval'
        return record
    raise NotFound('trace not found')


def _with_response(store: MemoryStore, row: dict[str, Any]) -> dict[str, Any]:
    response = row.get('response')
    if response is not None and not isinstance(response, dict):
        return {**row, 'response': store.get_trace('response_trace', str(response.id))}
    return row


def stats(store: MemoryStore, caller: Caller, window_hours: str | None) -> dict[str, Any]:
    hours = parse_int(window_hours, 'windowHours', 1, MAX_WINDOW_HOURS, 24)
    since = utcnow() - dt.timedelta(hours=hours)
    raw = TraceStore(store).stats(_principal_filter(caller), since)
    tiers = {TIER_NAMES.get(r['tier_entered'], str(r['tier_entered'])): r['n'] for r in raw['tiers']}
    total = sum(r['n'] for r in raw['tiers'])
    latency = sum((r['avg_ms'] or 0.0) * r['n'] for r in raw['tiers']) / total if total else 0.0
    cached = sum(r['n'] for r in raw['responses'] if r['cached'])
    responses = sum(r['n'] for r in raw['responses'])
    return {
        'windowHours': hours,
        'totalQueries': total,
        'avgLatencyMs': round(latency, 3),
        'cacheHits': cached,
        'responseTracesCached': cached,
        'responseTracesTotal': responses,
        'cacheHitRate': round(cached / responses, 6) if responses else 0.0,
        'tierCounts': {name: tiers.get(name, 0) for name in TIER_NAMES.values()},
        'endpoints': {r['endpoint']: r['n'] for r in raw['endpoints']},
    }
