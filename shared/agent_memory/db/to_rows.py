"""SDK rows (dicts holding ``RecordID``s) → the typed rows of ``agent_memory.rows``: the only place they meet."""

from __future__ import annotations

from typing import Any

from agent_memory.db.records import bare, ref, session_id_of
from agent_memory.rows.candidates import Candidate
from agent_memory.rows.control import ContextRow, PrincipalRow
from agent_memory.rows.conversation import ChunkRow, SessionRow, TurnRow
from agent_memory.rows.directives import InstructionRow, UncertaintyRow
from agent_memory.rows.memory import ActionRow, AttributeRow, EntityRow, RelationRow, Source
from agent_memory.rows.traces import DecisionTraceRow, ResponseTraceRow, RetrievalTraceRow

Row = dict[str, Any]


def required_ref(value: Any) -> str:
    """The wire ref of a record id that must be there."""
    text = ref(value)
    if text is None:
        raise ValueError('a required record id is missing')
    return text


def source(value: Any) -> Source | None:
    if not value:
        return None
    return Source(
        kind=value.get('kind'), ref=value.get('ref'), session_id=session_id_of(value.get('session_id')), principal=value.get('principal')
    )


def entity(row: Row) -> EntityRow:
    return EntityRow(
        ref=required_ref(row['id']),
        name=row['name'],
        type=row['type'],
        memory_category=row['memory_category'],
        importance=row['importance'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        updated_at=row['updated_at'],
        self_principal=row.get('self_principal'),
    )


def attribute(row: Row) -> AttributeRow:
    return AttributeRow(
        ref=required_ref(row['id']),
        entity=required_ref(row['entity']),
        key=row['key'],
        value=row['value'],
        memory_category=row['memory_category'],
        importance=row['importance'],
        confidence=row['confidence'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        valid_from=row.get('valid_from'),
        valid_until=row.get('valid_until'),
        confirmed_at=row.get('confirmed_at'),
        supersedes=ref(row.get('supersedes')),
        superseded_by=ref(row.get('superseded_by')),
        source=source(row.get('source')),
        source_turn=bare(row.get('source_turn')),
        tentative=bool(row.get('tentative', False)),
    )


def relation(row: Row) -> RelationRow:
    return RelationRow(
        ref=required_ref(row['id']),
        subject=required_ref(row['in']),
        label=row['label'],
        object=required_ref(row['out']),
        memory_category=row['memory_category'],
        importance=row['importance'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        valid_from=row.get('valid_from'),
        valid_until=row.get('valid_until'),
        source=source(row.get('source')),
        source_turn=bare(row.get('source_turn')),
    )


def action(row: Row) -> ActionRow:
    return ActionRow(
        ref=required_ref(row['id']),
        actor=required_ref(row['actor']),
        verb=row['verb'],
        summary=row['summary'],
        memory_category=row['memory_category'],
        importance=row['importance'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        object=ref(row.get('object')),
        object_text=row.get('object_text'),
        occurred_at=row.get('occurred_at'),
        valid_from=row.get('valid_from'),
        valid_until=row.get('valid_until'),
        source=source(row.get('source')),
        source_turn=bare(row.get('source_turn')),
    )


def session(row: Row) -> SessionRow:
    key = bare(row['id']) or ''
    return SessionRow(
        key=key,
        session_id=session_id_of(key) or '',
        principal=row.get('principal') or '',
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        metadata=dict(row.get('metadata') or {}),
        client_id=row.get('client_id'),
        closed_at=row.get('closed_at'),
    )


def turn(row: Row) -> TurnRow:
    return TurnRow(
        id=bare(row['id']) or '',
        session_key=row.get('session_key') or bare(row.get('session')) or '',
        seq=int(row['seq']),
        role=row['role'],
        content=row['content'],
        observed_at=row['observed_at'],
        scope_sets=row.get('scope_sets') or [],
        principal=row.get('principal') or '',
        speaker=row.get('speaker'),
        created_at=row.get('created_at'),
        memory_category=row.get('memory_category'),
        extraction_status=row.get('extraction_status'),
        extraction_error=row.get('extraction_error'),
        extraction_mode=row.get('extraction_mode'),
        extraction_result=row.get('extraction_result'),
        llm_error=row.get('llm_error'),
        read_region=row.get('read_region'),
        origin=row.get('origin'),
        acting_principal=row.get('acting_principal'),
    )


def chunk(row: Row) -> ChunkRow:
    return ChunkRow(
        ref=required_ref(row['id']),
        turn=bare(row['turn']) or '',
        session_key=bare(row['session']) or '',
        position=int(row['position']),
        text=row['text'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        role=row.get('role'),
        labels=list(row.get('labels') or []),
    )


def instruction(row: Row) -> InstructionRow:
    return InstructionRow(
        ref=required_ref(row['id']),
        label=row['label'],
        description=row['description'],
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        merged_count=int(row.get('merged_count') or 0),
        source_turn=bare(row.get('source_turn')),
        source_turns=tuple(bare(t) or '' for t in row.get('source_turns') or []),
    )


def uncertainty(row: Row) -> UncertaintyRow:
    return UncertaintyRow(
        ref=required_ref(row['id']),
        about=row['about'],
        reason=row['reason'],
        kind=row['kind'],
        resolved=bool(row.get('resolved')),
        scope_sets=row.get('scope_sets') or [],
        created_at=row['created_at'],
        entity=ref(row.get('entity')),
        key=row.get('key'),
        source_turn=bare(row.get('source_turn')),
        resolved_by=bare(row.get('resolved_by')),
        resolved_at=row.get('resolved_at'),
    )


def context(row: Row) -> ContextRow:
    return ContextRow(
        id=bare(row['id']) or '',
        config=dict(row.get('config') or {}),
        description=row.get('description'),
        created_at=row['created_at'],
        updated_at=row['updated_at'],
    )


def principal(row: Row) -> PrincipalRow:
    return PrincipalRow(
        id=bare(row['id']) or '',
        display_name=row['display_name'],
        kind=row['kind'],
        grants=dict(row.get('grants') or {}),
        default_scopes=row.get('default_scopes'),
        external_id=row.get('external_id'),
        created_at=row.get('created_at'),
        updated_at=row.get('updated_at'),
    )


def response_trace(row: Row) -> ResponseTraceRow:
    return ResponseTraceRow(
        ref=required_ref(row['id']),
        created_at=row['created_at'],
        principal=row.get('principal'),
        message=row.get('message'),
        reply=row.get('reply'),
        cached=bool(row.get('cached')),
        cache_eligible=bool(row.get('cache_eligible')),
        reused_from=ref(row.get('reused_from')),
        retrieval_trace=ref(row.get('retrieval_trace')),
        cited=list(row.get('cited') or []),
        cited_entity_refs=list(row.get('cited_entity_refs') or []),
        read_sources=list(row.get('read_sources') or []),
        model=row.get('model'),
        tokens=row.get('tokens'),
        session_id=session_id_of(row.get('session')),
        latency_ms=row.get('latency_ms'),
        read_region=row.get('read_region'),
    )


def retrieval_trace(row: Row) -> RetrievalTraceRow:
    """A retrieval trace; its ``response`` is a record id, or the response row itself where the read fetched it."""
    response = row.get('response')
    fetched = response if isinstance(response, dict) else None
    return RetrievalTraceRow(
        ref=required_ref(row['id']),
        query=row['query'],
        tier_entered=row['tier_entered'],
        tier_reason=row['tier_reason'],
        latency_ms=row['latency_ms'],
        created_at=row['created_at'],
        mode=row.get('mode'),
        endpoint=row.get('endpoint'),
        principal=row.get('principal'),
        source=row.get('source'),
        session_id=session_id_of(row.get('session')),
        returned=list(row.get('returned') or []),
        candidates=list(row.get('candidates') or []),
        response=ref(fetched['id']) if fetched else ref(response),
        answer=response_trace(fetched) if fetched else None,
        read_region=row.get('read_region'),
    )


def decision_trace(row: Row) -> DecisionTraceRow:
    return DecisionTraceRow(
        ref=required_ref(row['id']),
        created_at=row.get('created_at'),
        principal=row.get('principal'),
        turn=bare(row.get('turn')),
        input=row.get('input'),
        outcomes=row.get('outcomes'),
        latency_ms=row.get('latency_ms'),
        scope_sets=row.get('scope_sets'),
    )


def candidate(table: str, row: Row) -> Candidate:
    """A retrieval list's row: its table's projection (``retrieval_store.PROJECTIONS``) and the list's measure."""
    is_relation = table == 'relates_to'
    return Candidate(
        table=table,
        ref=required_ref(row['id']),
        scope_sets=row.get('scope_sets'),
        importance=row.get('importance'),
        created_at=row.get('created_at'),
        entity=ref(row.get('entity')),
        entity_name=row.get('entity_name'),
        key=row.get('key'),
        value=row.get('value'),
        name=row.get('name'),
        type=row.get('type'),
        text=row.get('text'),
        role=row.get('role'),
        session_key=bare(row.get('session')),
        session_id=session_id_of(row.get('session')),
        turn=bare(row.get('turn')),
        spoken_at=row.get('spoken_at'),
        seq=row.get('seq') if isinstance(row.get('seq'), int) else None,
        speaker=row.get('speaker'),
        principal=row.get('principal'),
        subject=ref(row.get('in')),
        subject_name=row.get('in_name'),
        object=ref(row.get('out') if is_relation else row.get('object')),
        object_name=row.get('out_name'),
        label=row.get('label'),
        actor=ref(row.get('actor')),
        actor_name=row.get('actor_name'),
        verb=row.get('verb'),
        summary=row.get('summary'),
        object_text=row.get('object_text'),
        occurred_at=row.get('occurred_at'),
        distance=row.get('distance'),
        bm25=row.get('bm25'),
        closeness=row.get('closeness'),
    )
