"""``POST /facts``, ``POST /facts/batch``, ``GET /extractions/{turn}`` and sessions (CONTRACT §6.1, §10)."""

from __future__ import annotations

import datetime as dt
import json
import time
from dataclasses import dataclass, replace
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import new_id, utcnow, when
from agent_memory.config import get_settings
from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import bare, rid
from agent_memory.db.turn_store import TurnStore
from agent_memory.domain import sessions
from agent_memory.domain.auth import Caller
from agent_memory.domain.chunks import chunk_id, split_text
from agent_memory.domain.extraction_pipeline import Extractors, TurnInput, preview_turn
from agent_memory.domain.idempotency import body_hash, replay_or_run
from agent_memory.domain.reconcile import Diff, Reconciler, Source, Speaker, triples_to_extraction
from agent_memory.domain.scopes import ScopeSets, normalise_scope_sets, visible, within_region
from agent_memory.domain.write_plan import IdempotencyRecord, WritePlan
from agent_memory.errors import Conflict, Forbidden, NotFound, PayloadTooLarge, QueueUnavailable
from agent_memory.jobs import ExtractionJob, JobQueue
from agent_memory.models import FactsBatchRequest, FactsRequest, SessionCreate
from agent_memory.observability import logger, metrics
from agent_memory.rows.conversation import SessionRow

NO_SESSION = 'session not found or outside your write region'
WAIT_POLL_SECONDS = 0.1
MAX_WAIT_SECONDS = 25


def write_region(caller: Caller, requested: Any, session: SessionRow | None) -> ScopeSets:
    scope_sets = normalise_scope_sets(requested)
    if scope_sets is None:
        scope_sets = session.scope_sets if session else caller.default_scopes
    if not within_region(scope_sets, caller.patterns('memory:write')):
        raise Forbidden('scopes are outside your write region')
    return scope_sets


def session_for_write(store: MemoryStore, caller: Caller, session_id: str | None) -> SessionRow | None:
    if session_id is None:
        return None
    session = sessions.writable(store, caller, session_id)
    if session is None:  # absent and out-of-region sessions answer identically (no id probing)
        raise Forbidden(NO_SESSION)
    if session.closed_at is not None:
        raise Conflict('session is closed')
    return session


@dataclass(frozen=True)
class Pipeline:
    """What writes that extract need: the job queue (None where none is configured) and the extractors."""

    queue: JobQueue | None
    extractors: Extractors


def check_text_size(*texts: str | None) -> None:
    """A turn's text is capped (CONTRACT §12, 64 KiB by default): 413 before anything is written."""
    limit = get_settings().max_text_bytes
    if any(t is not None and len(t.encode()) > limit for t in texts):
        raise PayloadTooLarge(f'text exceeds {limit} bytes')


def remember(
    store: MemoryStore,
    caller: Caller,
    pipeline: Pipeline,
    request: FactsRequest,
    raw_body: Any,
    idempotency_key: str | None,
    wait_seconds: float = 0.0,
) -> tuple[int, dict[str, Any]]:
    if request.infer == 'preview':
        return 200, _preview(store, caller, pipeline, request)
    if request.infer == 'full' and pipeline.queue is None:
        raise QueueUnavailable('the extraction queue is not configured; use infer "none" or "triples"')  # checked before writing
    digest = body_hash('POST', f'/api/v1/{caller.context_id}/facts', raw_body)
    # The first attempt uses the session read with authentication; a write re-planned after a conflict reads it afresh.
    attempts, fresh = iter([caller]), replace(caller, sessions_named=None)
    status, body = replay_or_run(
        store,
        caller.principal_id,
        idempotency_key,
        digest,
        lambda: run_with_retry(lambda: _remember_once(store, next(attempts, fresh), request, idempotency_key, digest)),
    )
    if request.infer != 'full' or status != 202:
        return status, body
    enqueue(store, caller.context_id, pipeline, [body['turnId']])
    done = _wait_for(store, [body['turnId']], wait_seconds)
    if done is None:
        return status, body
    return 200, {**body, 'status': 'done', 'extraction': done[0]}


def turn_row(
    caller: Caller,
    request_role: str,
    text: str,
    session_key: str,
    scope_sets: ScopeSets,
    now: dt.datetime,
    known_at: dt.datetime,
    status: str | None,
    category: str | None,
    speaker: str | None = None,
) -> dict[str, Any]:
    return {
        'id': new_id(),
        'session': rid('session', session_key),
        'role': request_role,
        'content': text,
        'principal': caller.principal_id,
        'scope_sets': scope_sets,
        'read_region': caller.patterns('memory:read'),  # bounds what extraction may send to an LLM with this turn
        'created_at': now,
        'observed_at': known_at,
        'extraction_status': status,
        'memory_category': category,
        'speaker': speaker,
        'enqueued_at': now if status == 'queued' else None,
    }


def chunks_for(turn: dict[str, Any], now: dt.datetime, labels: list[str]) -> list[dict[str, Any]]:
    return [
        {
            'id': chunk_id(turn['id'], i),
            'session': turn['session'],
            'turn': rid('turn', turn['id']),
            'position': i,
            'text': text,
            'embedding': None,
            'deferred': turn['extraction_status'] == 'queued',
            'scope_sets': turn['scope_sets'],
            'labels': labels,
            'role': turn['role'],
            'created_at': now,
        }
        for i, text in enumerate(split_text(turn['content']))
    ]


def _remember_once(
    store: MemoryStore, caller: Caller, request: FactsRequest, idem_key: str | None, digest: str
) -> tuple[int, dict[str, Any]]:
    started = time.perf_counter()
    now = utcnow()
    session = session_for_write(store, caller, request.session_id)
    scope_sets = write_region(caller, request.scopes, session)
    known_at = request.observed_at or now
    session_key, session_id, plan_session = sessions.target(caller, session, request.session_id, scope_sets, now)
    plan = WritePlan(now=now, principal=caller.principal_id, session_id=session_key)
    plan.new_session = plan_session
    turn_id = None
    if request.text is not None and request.text.strip():
        status = {'triples': 'done', 'full': 'queued'}.get(request.infer)
        turn = turn_row(
            caller, request.role, request.text, session_key, scope_sets, now, known_at, status, request.memory_category, request.name
        )
        turn_id = turn['id']
        plan.turns.append(turn)
        plan.chunks = chunks_for(turn, now, request.labels)
    response: dict[str, Any] = {'mode': request.infer, 'sessionId': session_id, 'turnId': turn_id}
    code = 200
    if request.infer == 'none':
        response['chunkId'] = plan.chunks[0]['id']
    elif request.infer == 'full':
        response['status'] = 'queued'
        code = 202
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
        source = Source('upsert', f'turn:{turn_id}' if turn_id else f'decision_trace:{trace_id}', session_key, caller.principal_id, turn_id)
        reconciler = Reconciler(
            store,
            plan,
            diff,
            source,
            scope_sets,
            default_category=request.memory_category or 'knowledge',
            floor=caller.config.reconciliation.confidence_floor,
            known_at=known_at,
            speaker=Speaker(caller.principal_id, caller.display_name),
        )
        reconciler.run(triples_to_extraction(request.triples))
        plan.decision_trace['latency_ms'] = (time.perf_counter() - started) * 1000
        response['extraction'] = diff.as_json()
        response['traceId'] = f'decision_trace:{trace_id}'
    if idem_key is not None:
        plan.idempotency = IdempotencyRecord(caller.principal_id, idem_key, digest, code, response)
    store.apply(plan)
    return code, response


def _preview(store: MemoryStore, caller: Caller, pipeline: Pipeline, request: FactsRequest) -> dict[str, Any]:
    session = session_for_write(store, caller, request.session_id)
    scope_sets = write_region(caller, request.scopes, session)
    seq = 1 << 62  # the preview turn would follow every stored one
    turn = TurnInput(
        None,
        sessions.key_of(session) if session else None,
        seq,
        request.role,
        request.text or '',
        request.observed_at or utcnow(),
        scope_sets,
        caller.principal_id,
        request.memory_category,
        request.name,
    )
    diff = preview_turn(
        store, pipeline.extractors, caller.config, turn, Speaker(caller.principal_id, caller.display_name), caller.patterns('memory:read')
    )
    return {'mode': 'preview', 'sessionId': request.session_id, 'turnId': None, 'preview': True, 'extraction': diff}


def enqueue(store: MemoryStore, context_id: str, pipeline: Pipeline, turn_ids: list[str], per_turn: bool = True) -> None:
    """Send the job(s). The turns are already durable: if sending fails they stay queued and the hourly sweep re-sends."""
    jobs = [ExtractionJob(context_id, (t,)) for t in turn_ids] if per_turn else [ExtractionJob(context_id, tuple(turn_ids))]
    try:
        assert pipeline.queue is not None
        pipeline.queue.send(jobs)
    except Exception:  # any transport failure: the write is accepted, the sweep retries the send
        logger.exception('could not enqueue extraction; the hourly sweep will re-send', extra={'turns': turn_ids})
        metrics.add_metric(name='ExtractionEnqueueFailed', unit=MetricUnit.Count, value=len(turn_ids))
        return
    TurnStore(store).mark_enqueued(turn_ids, utcnow())


def _wait_for(store: MemoryStore, turn_ids: list[str], wait_seconds: float) -> list[dict[str, Any]] | None:
    """``Prefer: wait=N``: poll until every turn's extraction is done, or give up (None)."""
    if wait_seconds <= 0:
        return None
    turns = TurnStore(store)
    deadline = time.monotonic() + wait_seconds
    while True:
        rows = [turns.get_turn(t) for t in turn_ids]
        if all(r is not None and r.extraction_status == 'done' for r in rows):
            return [json.loads(r.extraction_result or '{}') for r in rows if r is not None]
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(WAIT_POLL_SECONDS, max(0.0, deadline - time.monotonic())))


def remember_batch(
    store: MemoryStore,
    caller: Caller,
    pipeline: Pipeline,
    request: FactsBatchRequest,
    raw_body: Any,
    idempotency_key: str | None,
    wait_seconds: float = 0.0,
) -> tuple[int, dict[str, Any]]:
    """``POST /facts/batch``: the turns in order in one transaction, then one job per message or one for all."""
    if request.infer == 'full' and pipeline.queue is None:
        raise QueueUnavailable('the extraction queue is not configured; use infer "none"')
    digest = body_hash('POST', f'/api/v1/{caller.context_id}/facts/batch', raw_body)

    def once() -> tuple[int, dict[str, Any]]:
        now = utcnow()
        session = session_for_write(store, caller, request.session_id)
        scope_sets = write_region(caller, request.scopes, session)
        session_key, session_id, plan_session = sessions.target(caller, session, request.session_id, scope_sets, now)
        plan = WritePlan(now=now, principal=caller.principal_id, session_id=session_key)
        plan.new_session = plan_session
        status = 'queued' if request.infer == 'full' else None
        for message in request.messages:
            observed = message.ts or now
            turn = turn_row(caller, message.role, message.content, session_key, scope_sets, now, observed, status, None, message.name)
            plan.turns.append(turn)
            plan.chunks.extend(chunks_for(turn, now, request.labels))
        body = {'sessionId': session_id, 'turnIds': [t['id'] for t in plan.turns], 'status': 'queued' if status else 'stored'}
        code = 202 if status else 200
        if idempotency_key is not None:
            plan.idempotency = IdempotencyRecord(caller.principal_id, idempotency_key, digest, code, body)
        store.apply(plan)
        return code, body

    code, body = replay_or_run(store, caller.principal_id, idempotency_key, digest, lambda: run_with_retry(once))
    if request.infer != 'full' or code != 202:
        return code, body
    enqueue(store, caller.context_id, pipeline, body['turnIds'], per_turn=request.extract == 'per_message')
    done = _wait_for(store, body['turnIds'], wait_seconds)
    return (202, body) if done is None else (200, {**body, 'status': 'done', 'extractions': done})


def extraction_status(store: MemoryStore, caller: Caller, turn_id: str) -> dict[str, Any]:
    row = TurnStore(store).get_turn(turn_id)
    if row is None or not visible(row.scope_sets, caller.patterns('memory:read')):
        raise NotFound('turn not found')
    status = row.extraction_status or 'none'
    body: dict[str, Any] = {'turnId': turn_id, 'status': status}
    if row.extraction_result:
        body['extraction'] = json.loads(row.extraction_result)
    if row.extraction_mode:
        body['mode'] = row.extraction_mode
    if row.llm_error:
        body['llmError'] = row.llm_error
    if row.extraction_error:
        body['error'] = row.extraction_error
    return body


def create_session(store: MemoryStore, caller: Caller, request: SessionCreate) -> dict[str, Any]:
    scope_sets = write_region(caller, request.scopes, None)
    session_id = request.id or f'sess_{new_id()}'
    taken = Conflict(f'session {session_id!r} already exists')
    if sessions.readable(store, caller, session_id) is not None:  # one the caller can see is reused, never shadowed
        raise taken
    fresh = sessions.new_session_row(caller, session_id, scope_sets, utcnow(), request.metadata)
    try:
        row = store.create_session(sessions.storage_key(caller.principal_id, session_id), fresh)
    except Conflict as exc:
        raise taken from exc
    return {'id': session_id, 'scopes': row.scope_sets, 'metadata': row.metadata, 'createdAt': when(row.created_at)}


def readable_session(store: MemoryStore, caller: Caller, session_id: str) -> SessionRow:
    session = sessions.readable(store, caller, session_id)
    if session is None:
        raise NotFound('session not found')
    return session


def list_turns(store: MemoryStore, caller: Caller, session_id: str, limit: int, offset: int) -> dict[str, Any]:
    session = readable_session(store, caller, session_id)
    rows = store.list_turns(sessions.key_of(session), caller.patterns('memory:read'), limit + 1, offset)
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
    session = sessions.writable(store, caller, session_id)
    if session is None:
        raise NotFound('session not found')
    store.close_session(sessions.key_of(session), utcnow())
