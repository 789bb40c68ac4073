"""GET /traces, /traces/{id}, /traces/stats (CONTRACT §10), and ``inspect trace:<id>`` (the same views).

Who sees which traces: a caller with ``grant:manage`` over the whole context sees every trace; any other caller sees
the traces its own principal produced (traces hold query text, so they are never shared across principals by default).
The same rule bounds ``reusedBy``: two principals with the same readable region share cached answers, but each sees only
the reuses it made itself.

What it sees of them: a trace's texts were drawn from memory under the readable region it was made with
(stored on it as ``read_region``; a decision trace stores the scope its write went to). They are shown only while the
reader's *current* ``memory:read`` grant covers that region (narrowed keys and grants apply at once); otherwise the trace
is ``redacted``: its question and reply are null and its citations, returned rows and outcomes keep only the rows the
reader may read now. A reply is also withheld when any row it was built from is no longer readable (or no longer
exists). A trace written before migration 0030 has no region and counts as made under ``*``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agent_memory.clock import parse_rfc3339, utcnow, when
from agent_memory.domain.auth import Caller
from agent_memory.domain.params import parse_int
from agent_memory.domain.ports import TraceHistory
from agent_memory.domain.scopes import covered, region_within, visible
from agent_memory.errors import BadRequest, NotFound
from agent_memory.rows.refs import key_of
from agent_memory.rows.traces import DecisionTraceRow, ResponseTraceRow, RetrievalTraceRow, public_citation

MAX_WINDOW_HOURS = 24 * 365
TRACE_TABLES = ('retrieval_trace', 'response_trace', 'decision_trace')
TIER_NAMES = {1: 'direct', 2: 'cache', 3: 'hybrid'}  # a retrieval trace's tier_entered


def _principal_filter(caller: Caller) -> str | None:
    return None if covered(caller.patterns('grant:manage'), '*') else caller.principal_id


def _source_refs(row: ResponseTraceRow) -> list[str]:
    """What an answer was built from, as wire refs: its citations and what a model read without citing."""
    cited = [str(c['id']) for c in row.cited if c.get('id')]
    read = [f'{s["table"]}:{s["key"]}' for s in row.read_sources if s.get('table') != 'entity' and 'key' in s]
    return [*cited, *read]


@dataclass(frozen=True)
class Viewer:
    """A reader's grants and which of the rows the traces on one page name it may read now (one query)."""

    reader: list[str]
    readable: set[str]

    @classmethod
    def of(cls, traces: TraceHistory, caller: Caller, rows: Iterable[object]) -> Viewer:
        reader = caller.patterns('memory:read')
        refs: list[str] = []
        for row in rows:
            if isinstance(row, RetrievalTraceRow):
                refs += [str(r['id']) for r in row.returned if r.get('id')]
                row = row.answer
            if isinstance(row, ResponseTraceRow):
                refs += _source_refs(row)
            if isinstance(row, DecisionTraceRow):
                refs += [str(o.get('record')) for o in row.outcomes or [] if isinstance(o, dict) and o.get('record')]
        return cls(reader, traces.readable(refs, reader) if refs else set())

    def full(self, region: Sequence[str] | None) -> bool:
        return region_within(region, self.reader)

    def can_read(self, ref: Any) -> bool:
        return isinstance(ref, str) and ref in self.readable


def _response(row: ResponseTraceRow | None, viewer: Viewer) -> dict[str, Any] | None:
    if row is None:
        return None
    full = viewer.full(row.read_region)
    built_from_readable = all(viewer.can_read(ref) for ref in _source_refs(row))
    citations = [public_citation(c) for c in row.cited if full and built_from_readable or viewer.can_read(c.get('id'))]
    return {
        'id': row.ref,
        'userMessage': row.message if full else None,
        'responseText': row.reply if full and built_from_readable else None,
        'redacted': not (full and built_from_readable),
        'cached': row.cached,
        'reusedFrom': row.reused_from,
        'cacheEligible': row.cache_eligible,
        'citations': citations,
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


def _record(row: RetrievalTraceRow, viewer: Viewer) -> dict[str, Any]:
    parent = row.answer
    full = viewer.full(row.read_region)
    returned = [r for r in row.returned if full or viewer.can_read(r.get('id'))]
    return {
        'id': row.ref,
        'queryText': row.query if full else None,
        'redacted': not full,
        'endpoint': row.endpoint,
        'resolutionTier': TIER_NAMES.get(row.tier_entered, str(row.tier_entered)),
        'tierEntered': row.tier_entered,
        'tierReason': row.tier_reason,
        'cached': bool(parent and parent.cached),
        'latencyMs': row.latency_ms,
        'createdAt': when(row.created_at),
        'sessionId': row.session_id,
        'source': row.source,
        'parent': _response(parent, viewer),
        'retrievals': [
            {
                'id': row.ref,
                'mode': row.mode,
                'tierEntered': row.tier_entered,
                'tierReason': row.tier_reason,
                'latencyMs': row.latency_ms,
                'retrievedIds': [r['id'] for r in returned],
                'scores': [r['score'] for r in returned],
                'returned': [_returned(r) for r in returned],
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
    viewer = Viewer.of(traces, caller, page)
    return {'traces': [_record(r, viewer) for r in page], 'page': {'hasMore': len(rows) > limit, 'nextCursor': next_cursor}}


def _decision(row: DecisionTraceRow, viewer: Viewer) -> dict[str, Any]:
    full = row.scope_sets is not None and visible(row.scope_sets, viewer.reader)
    outcomes = [o for o in row.outcomes or [] if full or (isinstance(o, dict) and viewer.can_read(o.get('record')))]
    return {
        'id': row.ref,
        'kind': 'decision',
        'turnId': row.turn,
        'input': row.input if full else None,
        'outcomes': outcomes,
        'redacted': not full,
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
            return _decision(row, Viewer.of(traces, caller, [row]))
        if isinstance(row, ResponseTraceRow):
            found = traces.get('retrieval_trace', key_of(row.retrieval_trace)) if row.retrieval_trace else None
            if not isinstance(found, RetrievalTraceRow):
                viewer = Viewer.of(traces, caller, [row])
                return {'id': row.ref, 'kind': 'response', 'parent': _response(row, viewer), 'retrievals': [], 'reusedBy': []}
            row = found
        full_row = _with_response(traces, row)
        record = _record(full_row, Viewer.of(traces, caller, [full_row]))
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
