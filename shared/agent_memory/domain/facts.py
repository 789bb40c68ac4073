"""``POST /facts``, ``POST /facts/batch`` and ``GET /extractions/{turn}`` (CONTRACT §6.1, §10)."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.config import get_settings
from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.turn_store import TurnStore
from agent_memory.domain import sessions
from agent_memory.domain.auth import Caller
from agent_memory.domain.commit import commit
from agent_memory.domain.entity_keys import Speaker
from agent_memory.domain.extraction_pipeline import TurnInput, preview_turn
from agent_memory.domain.idempotency import body_hash, replay_or_run
from agent_memory.domain.pipeline import Pipeline, enqueue, wait_for_extractions
from agent_memory.domain.reconcile import Diff, Reconciler, Source, triples_to_extraction
from agent_memory.domain.scopes import visible
from agent_memory.domain.turns import chunks_for, new_turn
from agent_memory.domain.write_target import WriteTarget, session_for_write, write_region, write_target
from agent_memory.errors import NotFound, PayloadTooLarge, QueueUnavailable
from agent_memory.models import FactsBatchRequest, FactsRequest
from agent_memory.write_ops import SaveIdempotency, WritePlan

MAX_WAIT_SECONDS = 25


def check_text_size(*texts: str | None) -> None:
    """A turn's text is capped (CONTRACT §12, 64 KiB by default): 413 before anything is written."""
    limit = get_settings().max_text_bytes
    if any(t is not None and len(t.encode()) > limit for t in texts):
        raise PayloadTooLarge(f'text exceeds {limit} bytes')


def check_batch_size(texts: list[str]) -> None:
    """The messages of one batch together hold at most ``max_batch_text_bytes`` (64 KiB): each message is a turn with its
    own extraction budget, so a batch of many messages costs a hundred turns' work (worker CPU, and request CPU embedding
    and indexing them). 413 before anything is written."""
    limit = get_settings().max_batch_text_bytes
    if sum(len(t.encode()) for t in texts) > limit:
        raise PayloadTooLarge(f'the messages of one batch hold at most {limit} bytes of text together; send several batches')


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

    def once() -> tuple[int, dict[str, Any]]:
        attempt_caller = next(attempts, fresh)
        target = write_target(store, attempt_caller, request.session_id, request.scopes, utcnow())
        code, response, plan = _plan_facts(store, attempt_caller, target, request)
        if idempotency_key is not None:
            plan.add(SaveIdempotency(caller.principal_id, idempotency_key, digest, code, response, target.now, target.scope_sets,
                                     caller.patterns('memory:read')))  # fmt: skip
        commit(store, pipeline.embedder, plan)
        return code, response

    status, body = replay_or_run(store, caller, idempotency_key, digest, lambda: run_with_retry(once))
    if request.infer != 'full' or status != 202:
        return status, body
    enqueue(store, caller.context_id, pipeline, [body['turnId']])
    done = wait_for_extractions(store, [body['turnId']], wait_seconds)
    if done is None:
        return status, body
    return 200, {**body, 'status': 'done', 'extraction': done[0]}


def _plan_facts(store: MemoryStore, caller: Caller, target: WriteTarget, request: FactsRequest) -> tuple[int, dict[str, Any], WritePlan]:
    started = time.perf_counter()
    plan = target.plan()
    turn_id, chunks = None, []
    if request.text is not None and request.text.strip():
        status = {'triples': 'done', 'full': 'queued'}.get(request.infer)
        turn = new_turn(caller, request.role, request.text, target.session_key, target.scope_sets, target.now,
                        observed_at=request.observed_at, status=status, category=request.memory_category, speaker=request.name)  # fmt: skip
        turn_id, chunks = turn.id, chunks_for(turn, request.labels)
        plan.add(turn, *chunks)
    response: dict[str, Any] = {'mode': request.infer, 'sessionId': target.session_id, 'turnId': turn_id}
    if request.infer == 'none':
        return 200, response | {'chunkId': chunks[0].id}, plan
    if request.infer == 'full':
        return 202, response | {'status': 'queued'}, plan
    diff, trace_id = Diff(turn_id=turn_id), new_id()
    source = Source(
        'upsert', f'turn:{turn_id}' if turn_id else f'decision_trace:{trace_id}', target.session_key, caller.principal_id, turn_id,
        acting_principal=caller.acting_principal_id,
    )  # fmt: skip
    reconciler = Reconciler(
        store,
        plan,
        diff,
        source,
        target.scope_sets,
        default_category=request.memory_category or 'knowledge',
        floor=caller.config.reconciliation.confidence_floor,
        known_at=request.observed_at or target.now,
        speaker=Speaker(caller.principal_id, caller.display_name),
        reader=caller.patterns('memory:read'),
    )
    reconciler.run(triples_to_extraction(request.triples))
    trace_input = {'infer': 'triples', 'triples': [t.model_dump(mode='json') for t in request.triples]}
    plan.add(reconciler.decision_trace(trace_id, trace_input, turn_id, (time.perf_counter() - started) * 1000))
    return 200, response | {'extraction': diff.as_json(), 'traceId': f'decision_trace:{trace_id}'}, plan


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
        target = write_target(store, caller, request.session_id, request.scopes, utcnow())
        plan = target.plan()
        status = 'queued' if request.infer == 'full' else None
        turns = [
            new_turn(caller, m.role, m.content, target.session_key, target.scope_sets, target.now, observed_at=m.ts, status=status,
                     speaker=m.name)
            for m in request.messages
        ]  # fmt: skip
        for turn in turns:
            plan.add(turn, *chunks_for(turn, request.labels))
        body = {'sessionId': target.session_id, 'turnIds': [t.id for t in turns], 'status': 'queued' if status else 'stored'}
        code = 202 if status else 200
        if idempotency_key is not None:
            plan.add(SaveIdempotency(caller.principal_id, idempotency_key, digest, code, body, target.now, target.scope_sets,
                                     caller.patterns('memory:read')))  # fmt: skip
        commit(store, pipeline.embedder, plan)
        return code, body

    code, body = replay_or_run(store, caller, idempotency_key, digest, lambda: run_with_retry(once))
    if request.infer != 'full' or code != 202:
        return code, body
    enqueue(store, caller.context_id, pipeline, body['turnIds'], per_turn=request.extract == 'per_message')
    done = wait_for_extractions(store, body['turnIds'], wait_seconds)
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
