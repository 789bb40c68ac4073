"""One emitter per write operation kind: each adds its SurrealQL and bound parameters to the write's transaction.

``emit_all`` orders the operations by kind (stable within a kind: turns keep their order, so their ``seq`` does):
the turn-outcome check first (a second attempt at one turn aborts before anything), every guard before the rows it
guards, the rows, then traces and reinforcement.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from agent_memory.db.connection import ALREADY_APPLIED, CONFLICT_MARKER
from agent_memory.db.predicates import OPEN, address_key
from agent_memory.db.records import Tx, content_of, entity_rid, rid
from agent_memory.db.reinforcement import ImportanceRule, reinforce_statement, reinforced_ids
from agent_memory.db.sdk import vector
from agent_memory.db.trace_rows import add_traces
from agent_memory.write_ops import (
    CloseAttribute,
    CloseRelation,
    CreateAction,
    CreateAttribute,
    CreateChunk,
    CreateInstruction,
    CreateRelation,
    CreateSession,
    CreateTurn,
    CreateUncertainty,
    DecisionTrace,
    EmbedChunk,
    FactFields,
    GuardAddress,
    GuardInstructions,
    MarkTurnExtracted,
    MergeInstruction,
    Operation,
    RefreshAttribute,
    RefreshRelation,
    Reinforce,
    ResolveUncertainty,
    SaveIdempotency,
    SupersedeAttribute,
    UpsertEntity,
    WriteTraces,
)


class Emit:
    """The transaction under construction, the write's clock (bound once) and the importance rule reinforcement applies."""

    def __init__(self, tx: Tx, now: str, importance: ImportanceRule) -> None:
        self.tx, self.now, self.importance = tx, now, importance
        self.new_sessions: set[str] = set()  # created by this transaction: no turns yet
        self._seq: dict[str, str] = {}  # session key -> the variable holding its last turn's seq in this transaction

    def next_seq(self, session_key: str) -> str:
        """The variable holding the next turn's seq in the session: read once per transaction (not at all for a session
        it creates), then counted up. The unique (session, seq) index makes a concurrent writer's turn a conflict."""
        var = self._seq.get(session_key)
        if var is not None:
            self.add(f'LET {var} = {var} + 1')
            return var
        var = self._seq[session_key] = f'$seq{len(self._seq)}'
        last = '0' if session_key in self.new_sessions else (
            f'((SELECT VALUE seq FROM turn WHERE session_key = {self.p(session_key)} ORDER BY seq DESC LIMIT 1)[0] ?? 0)'
        )  # fmt: skip
        self.add(f'LET {var} = {last} + 1')
        return var

    def p(self, value: Any) -> str:
        return self.tx.p(value)

    def add(self, statement: str) -> None:
        self.tx.add(statement)

    def create(self, table: str, key: Any, content: dict[str, Any]) -> None:
        self.add(f'CREATE {self.p(rid(table, key))} CONTENT {self.p(content)}')


def _turn(turn_id: str | None) -> Any:
    return rid('turn', turn_id) if turn_id else None


def _guard_unchanged(emit: Emit, table: str, condition: str, seen_ids: Iterable[str]) -> None:
    """Abort the transaction (a retryable conflict) if the rows matching ``condition`` are not the ones planned on."""
    seen = emit.p([rid(table, i) for i in sorted(seen_ids)])
    emit.add(f"IF array::sort((SELECT VALUE id FROM {table} WHERE {condition})) != {seen} {{ THROW '{CONFLICT_MARKER}: {table} changed' }}")


def _fact_content(fields: FactFields) -> dict[str, Any]:
    """A new fact row's shared fields as stored: its initial importance is the decay base (migration 0015)."""
    content = {
        'memory_category': fields.memory_category,
        'importance_base': fields.importance,
        'source': asdict(fields.source),
        'source_turn': _turn(fields.source_turn),
        'valid_from': fields.valid_from,
        'created_at': fields.created_at,
        'scope_sets': fields.scope_sets,
    }
    if fields.confirmed_at is not None:  # actions are never confirmed
        content['confirmed_at'] = fields.confirmed_at
    return content


def mark_turn_extracted(emit: Emit, op: MarkTurnExtracted) -> None:
    turn = emit.p(rid('turn', op.turn_id))
    emit.add(f"IF (SELECT VALUE extraction_status FROM ONLY {turn}) = 'done' {{ THROW '{ALREADY_APPLIED}' }}")
    emit.add(
        f"UPDATE {turn} SET extraction_status = 'done', extraction_result = {emit.p(op.result_json)}, "
        f'extraction_error = NONE, extraction_mode = {emit.p(op.mode)}, llm_error = {emit.p(op.llm_error)}, extracted_at = {emit.now}'
    )


def save_idempotency(emit: Emit, op: SaveIdempotency) -> None:
    # JSON text, not an object: the SDK sends None as NONE, which would drop null fields from the replay
    content = {'body_hash': op.body_hash, 'status': op.status, 'response_json': json.dumps(op.response), 'created_at': op.created_at,
               'write_scope': op.write_scope, 'read_region': list(op.read_region) if op.read_region is not None else None}  # fmt: skip
    emit.create('idempotency', [op.principal, op.key], content)


def session_content(op: CreateSession) -> dict[str, Any]:
    return {'scope_sets': op.scope_sets, 'metadata': dict(op.metadata), 'principal': op.principal, 'client_id': op.client_id,
            'created_at': op.created_at}  # fmt: skip


def create_session(emit: Emit, op: CreateSession) -> None:
    emit.create('session', op.key, session_content(op))
    emit.new_sessions.add(op.key)


def guard_address(emit: Emit, op: GuardAddress) -> None:
    condition = f'address = {emit.p(address_key(op.entity_key, op.key))} AND {OPEN.replace("$now", emit.now)}'
    _guard_unchanged(emit, 'attribute', condition, op.seen_ids)


def guard_instructions(emit: Emit, op: GuardInstructions) -> None:
    condition = f'label_key = {emit.p(op.label_key)} AND description_key = {emit.p(op.description_key)} AND active = true'
    _guard_unchanged(emit, 'instruction', condition, op.seen_ids)


def create_turn(emit: Emit, op: CreateTurn) -> None:
    content = content_of(op)
    del content['id'], content['session_key']
    content['session'] = rid('session', op.session_key)
    seq = emit.next_seq(op.session_key)
    emit.add(f'CREATE {emit.p(rid("turn", op.id))} CONTENT object::extend({emit.p(content)}, {{ seq: {seq} }})')


def create_chunk(emit: Emit, op: CreateChunk) -> None:
    content = content_of(op)
    del content['id'], content['session_key'], content['turn_id'], content['deferred']
    content |= {'session': rid('session', op.session_key), 'turn': rid('turn', op.turn_id), 'embedding': vector(op.embedding)}
    emit.create('memory_chunk', op.id, content)


def embed_chunk(emit: Emit, op: EmbedChunk) -> None:
    emit.add(f'UPDATE {emit.p(rid("memory_chunk", op.chunk_id))} SET embedding = {emit.p(vector(op.embedding))} WHERE embedding IS NONE')


def upsert_entity(emit: Emit, op: UpsertEntity) -> None:
    row = {'name': op.name, 'type': op.key[0], 'memory_category': op.memory_category, 'importance': op.importance,
           'scope_sets': op.scope_sets, 'created_at': op.created_at, 'self_principal': op.self_principal,
           'embedding': vector(op.embedding), 'updated_at': op.updated_at}  # fmt: skip
    named = (
        'name = $e.name, embedding = $e.embedding ?? embedding'
        if op.rename
        else 'name = name ?? $e.name, embedding = embedding ?? $e.embedding'
    )
    emit.add(
        f'UPSERT {emit.p(entity_rid(*op.key))} SET {named}, type = $e.type, '
        'memory_category = memory_category ?? $e.memory_category, importance_base = importance_base ?? $e.importance, '
        'scope_sets = array::union(scope_sets ?? [], $e.scope_sets), created_at = created_at ?? $e.created_at, '
        'self_principal = self_principal ?? $e.self_principal, updated_at = $e.updated_at'.replace('$e', emit.p(row))
    )


def create_attribute(emit: Emit, op: CreateAttribute) -> None:
    content = _fact_content(op.fields) | {
        'entity': entity_rid(*op.entity_key),
        'key': op.key,
        'value': op.value,
        'confidence': op.confidence,
        'embedding': vector(op.embedding),
    }
    links = {'valid_until': op.valid_until, 'supersedes': op.supersedes and rid('attribute', op.supersedes),
             'superseded_by': op.superseded_by and rid('attribute', op.superseded_by)}  # fmt: skip
    emit.create('attribute', op.id, content | {k: v for k, v in links.items() if v is not None})


def supersede_attribute(emit: Emit, op: SupersedeAttribute) -> None:
    emit.add(
        f'UPDATE {emit.p(rid("attribute", op.old_id))} SET valid_until = {emit.now}, superseded_by = {emit.p(rid("attribute", op.new_id))}'
    )


def close_attribute(emit: Emit, op: CloseAttribute) -> None:
    emit.add(f'UPDATE {emit.p(rid("attribute", op.id))} SET valid_until = {emit.now}')


def refresh_attribute(emit: Emit, op: RefreshAttribute) -> None:
    confidence = emit.p(op.confidence)
    emit.add(f'UPDATE {emit.p(rid("attribute", op.id))} SET confirmed_at = {emit.now}, confidence = math::max([confidence, {confidence}])')


def create_relation(emit: Emit, op: CreateRelation) -> None:
    content = _fact_content(op.fields) | {'label': op.label}
    src, edge, dst = entity_rid(*op.from_key), rid('relates_to', op.id), entity_rid(*op.to_key)
    emit.add(f'RELATE {emit.p(src)}->{emit.p(edge)}->{emit.p(dst)} CONTENT {emit.p(content)}')


def refresh_relation(emit: Emit, op: RefreshRelation) -> None:
    emit.add(f'UPDATE {emit.p(rid("relates_to", op.id))} SET confirmed_at = {emit.now}')


def close_relation(emit: Emit, op: CloseRelation) -> None:
    now = emit.now
    emit.add(f'UPDATE {emit.p(rid("relates_to", op.id))} SET valid_until = {now} WHERE valid_until IS NONE OR valid_until > {now}')


def create_action(emit: Emit, op: CreateAction) -> None:
    content = _fact_content(op.fields) | {
        'actor': entity_rid(*op.actor_key),
        'object': entity_rid(*op.object_key) if op.object_key else None,
        'verb': op.verb,
        'object_text': op.object_text,
        'summary': op.summary,
        'occurred_at': op.occurred_at,
    }
    emit.create('action', op.id, content)


def create_instruction(emit: Emit, op: CreateInstruction) -> None:
    content = asdict(op)
    del content['id']
    content |= {'source_turn': _turn(op.source_turn), 'source_turns': [_turn(op.source_turn)] if op.source_turn else [],
                'active': True, 'merged_count': 0, 'updated_at': op.created_at}  # fmt: skip
    emit.create('instruction', op.id, content)


def merge_instruction(emit: Emit, op: MergeInstruction) -> None:
    turns = emit.p([_turn(op.source_turn)] if op.source_turn else [])
    emit.add(
        f'UPDATE {emit.p(rid("instruction", op.id))} SET merged_count += 1, '
        f'source_turns = array::union(source_turns, {turns}), updated_at = {emit.now}'
    )


def resolve_uncertainty(emit: Emit, op: ResolveUncertainty) -> None:
    emit.add(
        f'UPDATE {emit.p(rid("uncertainty", op.id))} SET resolved = true, resolved_by = {emit.p(_turn(op.resolved_by_turn))}, '
        f'resolved_at = {emit.now} WHERE resolved = false'
    )


def create_uncertainty(emit: Emit, op: CreateUncertainty) -> None:
    content = asdict(op)
    del content['id'], content['entity_key']
    content |= {'source_turn': _turn(op.source_turn), 'resolved': False}
    if op.entity_key:
        content['entity'] = entity_rid(*op.entity_key)
    emit.create('uncertainty', op.id, content)


def decision_trace(emit: Emit, op: DecisionTrace) -> None:
    content = {'input': dict(op.input), 'outcomes': [dict(o) for o in op.outcomes], 'principal': op.principal,
               'turn': _turn(op.turn_id), 'latency_ms': op.latency_ms, 'created_at': op.created_at, 'scope_sets': op.scope_sets,
               'acting_principal': op.acting_principal}  # fmt: skip
    emit.create('decision_trace', op.id, content)


def write_traces(emit: Emit, op: WriteTraces) -> None:
    add_traces(emit.tx, op.retrieval, op.response)


def reinforce(emit: Emit, op: Reinforce) -> None:
    if ids := reinforced_ids(op.refs):
        emit.add(reinforce_statement(emit.tx, ids, emit.importance))


Emitter = Callable[[Emit, Any], None]
# In transaction order (see the module docstring).
EMITTERS: dict[type[Any], Emitter] = {
    MarkTurnExtracted: mark_turn_extracted,
    SaveIdempotency: save_idempotency,
    CreateSession: create_session,
    GuardAddress: guard_address,
    CreateTurn: create_turn,
    CreateChunk: create_chunk,
    EmbedChunk: embed_chunk,
    UpsertEntity: upsert_entity,
    CreateAttribute: create_attribute,
    SupersedeAttribute: supersede_attribute,
    CloseAttribute: close_attribute,
    RefreshAttribute: refresh_attribute,
    CreateRelation: create_relation,
    RefreshRelation: refresh_relation,
    CloseRelation: close_relation,
    CreateAction: create_action,
    GuardInstructions: guard_instructions,
    CreateInstruction: create_instruction,
    MergeInstruction: merge_instruction,
    ResolveUncertainty: resolve_uncertainty,
    CreateUncertainty: create_uncertainty,
    DecisionTrace: decision_trace,
    WriteTraces: write_traces,
    Reinforce: reinforce,
}
_RANK = {kind: rank for rank, kind in enumerate(EMITTERS)}


def emit_all(tx: Tx, now: str, operations: Iterable[Operation], importance: ImportanceRule) -> None:
    emit = Emit(tx, now, importance)
    for op in sorted(operations, key=lambda o: _RANK[type(o)]):
        EMITTERS[type(op)](emit, op)
