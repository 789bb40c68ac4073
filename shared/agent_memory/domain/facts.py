"""``POST /facts`` (infer ``triples`` and ``none``) and sessions (CONTRACT §6.1, §10)."""

from __future__ import annotations

import time
from typing import Any

from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import bare, rid, when
from agent_memory.domain.auth import Caller
from agent_memory.domain.idempotency import body_hash, replay_or_run
from agent_memory.domain.ids import new_id, utcnow
from agent_memory.domain.reconcile import Diff, Source, TripleReconciler
from agent_memory.domain.scopes import ScopeSets, normalise_scope_sets, visible, within_region
from agent_memory.domain.write_plan import IdempotencyRecord, WritePlan
from agent_memory.errors import Conflict, Forbidden, NotFound, NotImplementedYet
from agent_memory.models import FactsRequest, SessionCreate

CHUNK_CHARS = 2000
NO_SESSION = 'session not found or outside your write region'


def split_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Split long turn text into chunks of at most ``size`` characters, preferring whitespace boundaries."""
    chunks, rest = [], text
    while len(rest) > size:
        cut = rest.rfind(' ', 0, size)
        cut = size if cut <= size // 2 else cut
        chunks.append(rest[:cut].strip())
        rest = rest[cut:]
    if rest.strip() or not chunks:
        chunks.append(rest.strip())
    return [c for c in chunks if c] or [text]


def write_region(caller: Caller, requested: Any, session: dict[str, Any] | None) -> ScopeSets:
    scope_sets = normalise_scope_sets(requested)
    if scope_sets is None:
        scope_sets = session['scope_sets'] if session else caller.default_scopes
    if not within_region(scope_sets, caller.patterns('memory:write')):
        raise Forbidden('scopes are outside your write region')
    return scope_sets


def _session_for_write(store: MemoryStore, caller: Caller, session_id: str | None) -> dict[str, Any] | None:
    if session_id is None:
        return None
    session = store.get_session(session_id)
    # absent and out-of-region sessions answer identically (no id probing)
    if session is None or not within_region(session['scope_sets'], caller.patterns('memory:write')):
        raise Forbidden(NO_SESSION)
    if session.get('closed_at') is not None:
        raise Conflict('session is closed')
    return session


def remember(
    store: MemoryStore, caller: Caller, request: FactsRequest, raw_body: Any, idempotency_key: str | None
) -> tuple[int, dict[str, Any]]:
    if request.infer in ('full', 'preview'):
        raise NotImplementedYet(
            f'infer "{request.infer}" needs the extraction pipeline, which this deployment does not have yet; use "triples" or "none"'
        )
    digest = body_hash('POST', f'/api/v1/{caller.context_id}/facts', raw_body)
    return replay_or_run(
        store,
        caller.principal_id,
        idempotency_key,
        digest,
        lambda: run_with_retry(lambda: _remember_once(store, caller, request, idempotency_key, digest)),
    )


def _remember_once(
    store: MemoryStore, caller: Caller, request: FactsRequest, idem_key: str | None, digest: str
) -> tuple[int, dict[str, Any]]:
    started = time.perf_counter()
    now = utcnow()
    session = _session_for_write(store, caller, request.session_id)
    scope_sets = write_region(caller, request.scopes, session)
    known_at = request.observed_at or now
    session_id = request.session_id or f'sess_{new_id()}'
    plan = WritePlan(now=now, principal=caller.principal_id, session_id=session_id)
    if session is None:
        plan.new_session = {'scope_sets': scope_sets, 'metadata': {}, 'principal': caller.principal_id, 'created_at': now}
    turn_id = None
    if request.text is not None and request.text.strip():
        turn_id = new_id()
        plan.turn = {
            'id': turn_id,
            'session': rid('session', session_id),
            'role': request.role,
            'content': request.text,
            'principal': caller.principal_id,
            'scope_sets': scope_sets,
            'created_at': now,
            'observed_at': known_at,
            'extraction_status': 'done' if request.infer == 'triples' else None,
        }
    response: dict[str, Any] = {'mode': request.infer, 'sessionId': session_id, 'turnId': turn_id}
    if request.infer == 'none':
        assert turn_id is not None
        plan.chunks = [
            {
                'id': new_id(),
                'session': rid('session', session_id),
                'turn': rid('turn', turn_id),
                'position': i,
                'text': text,
                'embedding': None,
                'scope_sets': scope_sets,
                'created_at': now,
            }
            for i, text in enumerate(split_text(request.text or ''))
        ]
        response['chunkId'] = plan.chunks[0]['id']
    else:
        diff = Diff(turn_id=turn_id)
        trace_id = new_id()
        plan.decision_trace = {
            'id': trace_id,
            'input': {'infer': 'triples', 'triples': [t.model_dump(mode='json') for t in request.triples]},
            'outcomes': [],
            'principal': caller.principal_id,
            'turn': rid('turn', turn_id) if turn_id else None,
            'latency_ms': 0.0,
            'created_at': now,
        }
        source = Source('upsert', f'turn:{turn_id}' if turn_id else f'decision_trace:{trace_id}', session_id, caller.principal_id, turn_id)
        reconciler = TripleReconciler(
            store,
            plan,
            diff,
            source,
            scope_sets,
            request.memory_category or 'knowledge',
            caller.config.reconciliation.confidence_floor,
            known_at,
        )
        reconciler.run(request.triples)
        plan.decision_trace['latency_ms'] = (time.perf_counter() - started) * 1000
        response['extraction'] = diff.as_json()
        response['traceId'] = f'decision_trace:{trace_id}'
    if idem_key is not None:
        plan.idempotency = IdempotencyRecord(caller.principal_id, idem_key, digest, 200, response)
    store.apply(plan)
    return 200, response


def create_session(store: MemoryStore, caller: Caller, request: SessionCreate) -> dict[str, Any]:
    scope_sets = write_region(caller, request.scopes, None)
    session_id = request.id or f'sess_{new_id()}'
    now = utcnow()
    try:
        row = store.create_session(
            session_id, {'scope_sets': scope_sets, 'metadata': request.metadata, 'principal': caller.principal_id, 'created_at': now}
        )
    except Conflict as exc:
        raise Conflict(f'session {session_id!r} already exists') from exc
    return {'id': session_id, 'scopes': row['scope_sets'], 'metadata': row.get('metadata') or {}, 'createdAt': when(row['created_at'])}


def _readable_session(store: MemoryStore, caller: Caller, session_id: str) -> dict[str, Any]:
    session = store.get_session(session_id)
    if session is None or not visible(session['scope_sets'], caller.patterns('memory:read')):
        raise NotFound('session not found')
    return session


def list_turns(store: MemoryStore, caller: Caller, session_id: str, limit: int, offset: int) -> dict[str, Any]:
    _readable_session(store, caller, session_id)
    rows = store.list_turns(session_id, limit + 1, offset)
    turns = [
        {
            'id': bare(r['id']),
            'session': session_id,
            'role': r['role'],
            'content': r['content'],
            'seq': r['seq'],
            'createdAt': when(r['created_at']),
            'observedAt': when(r['observed_at']),
            'extraction': r.get('extraction_status'),
        }
        for r in rows[:limit]
    ]
    has_more = len(rows) > limit
    return {'turns': turns, 'page': {'hasMore': has_more, 'nextCursor': str(offset + limit) if has_more else None}}


def close_session(store: MemoryStore, caller: Caller, session_id: str) -> None:
    session = store.get_session(session_id)
    if session is None or not within_region(session['scope_sets'], caller.patterns('memory:write')):
        raise NotFound('session not found')
    store.close_session(session_id, utcnow())
