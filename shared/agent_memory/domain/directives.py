"""Instructions (CONTRACT §6.4) and uncertainties (§6.5) as domain operations.

Instructions are never revoked or superseded: a reversal is a new active instruction beside the
old one. The only deactivation is de-duplication — the same label and description (compared
case-insensitively) in an overlapping scope merges into the existing row.
"""

from __future__ import annotations

from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import rid
from agent_memory.domain import views
from agent_memory.domain.reconcile import Diff, Reconciler, Source, Speaker
from agent_memory.domain.scopes import ScopeSets, within_region
from agent_memory.domain.write_plan import WritePlan
from agent_memory.errors import BadRequest, NotFound, Unprocessable
from agent_memory.extraction.model import EntityRef, ExtractedAttribute, ExtractedInstruction, Extraction, Invalidation
from agent_memory.vocabulary import MemoryCategory, names_self_entity


def _system_reconciler(store: MemoryStore, plan: WritePlan, diff: Diff, scope_sets: ScopeSets, source: Source) -> Reconciler:
    return Reconciler(
        store,
        plan,
        diff,
        source,
        scope_sets,
        default_category='knowledge',
        floor=0.7,
        known_at=plan.now,
        speaker=Speaker('system', 'System'),
    )


def add_instruction(
    store: MemoryStore, label: str, description: str, scope_sets: ScopeSets, source_turn: str | None = None
) -> tuple[dict[str, Any], bool]:
    """Store a directive through the reconciler; return (instruction, merged) where merged means an existing row absorbed it."""
    if not label.strip() or not description.strip():
        raise BadRequest('an instruction needs a label and a description')
    extraction = Extraction(instructions=(ExtractedInstruction(label=label, description=description),))

    def attempt() -> tuple[str, bool]:
        plan = WritePlan(now=utcnow(), principal='system', session_id=None)
        diff = Diff(turn_id=source_turn)
        source = Source('turn' if source_turn else 'upsert', f'turn:{source_turn}' if source_turn else None, None, 'system', source_turn)
        _system_reconciler(store, plan, diff, scope_sets, source).run(extraction)
        store.apply(plan)
        return str(diff.instructions[0]['id']).split(':', 1)[1], bool(plan.merged_instructions)

    instruction_id, merged = run_with_retry(attempt)
    row = store.get_instruction(instruction_id)
    assert row is not None
    return views.instruction_detail(row), merged


def record_uncertainty(
    store: MemoryStore,
    about: str,
    reason: str,
    kind: str,
    scope_sets: ScopeSets,
    source_turn: str | None = None,
    entity: list[str] | None = None,
    key: str | None = None,
) -> dict[str, Any]:
    if not about.strip() or not reason.strip():
        raise BadRequest('an uncertainty needs what (about) and why (reason)')
    row = {
        'about': about,
        'reason': reason,
        'kind': kind,
        'entity': rid('entity', entity) if entity else None,
        'key': key,
        'source_turn': rid('turn', source_turn) if source_turn else None,
        'resolved': False,
        'scope_sets': scope_sets,
        'created_at': utcnow(),
    }
    return views.uncertainty_detail(store.create_uncertainty(new_id(), row))


def resolve_uncertainty(store: MemoryStore, uncertainty_id: str, resolved_by_turn: str | None = None) -> dict[str, Any]:
    """Mark an open uncertainty resolved (idempotent: resolving twice keeps the first resolution)."""
    updated = store.resolve_uncertainty(uncertainty_id, rid('turn', resolved_by_turn) if resolved_by_turn else None, utcnow())
    row = updated or store.get_uncertainty(uncertainty_id)
    if row is None:
        raise NotFound('uncertainty not found')
    return views.uncertainty_detail(row)


def accept_value(store: MemoryStore, caller_principal: str, write_patterns: list[str], uncertainty_id: str, value: str) -> dict[str, Any]:
    """``POST /uncertainty/{id}/resolve``: write the accepted value through the reconciler at the flag's own scope,
    retire the competing values and settle the flag — one transaction."""
    row = store.get_uncertainty(uncertainty_id)
    if row is None or not within_region(row['scope_sets'], write_patterns):
        raise NotFound('uncertainty not found')
    if row.get('entity') is None or not row.get('key'):
        raise Unprocessable('this uncertainty is not about one entity and key, so no value can settle it')
    entity_type, entity_name = row['entity'].id
    if names_self_entity(entity_name) and [entity_type, entity_name] != Speaker(caller_principal, '').key:
        raise BadRequest('a self entity is written only by its own principal; this doubt is theirs to settle')
    subject = EntityRef(type=entity_type, name=entity_name)
    extraction = Extraction(
        attributes=(ExtractedAttribute(entity=subject, key=row['key'], value=value, confidence=1.0),),
        invalidations=(Invalidation(entity=subject, key=row['key']),),
    )

    def attempt() -> Diff:
        plan = WritePlan(now=utcnow(), principal=caller_principal, session_id=None)
        diff = Diff(turn_id=None)
        source = Source('upsert', f'uncertainty:{uncertainty_id}', None, caller_principal)
        reconciler = _system_reconciler(store, plan, diff, row['scope_sets'], source)
        reconciler.category_override = row_category(store, row)
        reconciler.run(extraction)
        if uncertainty_id not in plan.resolved_uncertainties:
            plan.resolved_uncertainties.append(uncertainty_id)
        store.apply(plan)
        return diff

    diff = run_with_retry(attempt)
    settled = store.get_uncertainty(uncertainty_id)
    assert settled is not None
    return {'uncertainty': views.uncertainty_detail(settled), 'attributes': diff.attributes, 'corrections': diff.corrections}


def row_category(store: MemoryStore, uncertainty: dict[str, Any]) -> MemoryCategory | None:
    """The accepted value keeps the category of the values it settles (or the reconciler's default)."""
    rows = store.live_attributes([(list(uncertainty['entity'].id), uncertainty['key'])], utcnow())
    categories = [r['memory_category'] for r in rows]
    return categories[0] if categories else None
