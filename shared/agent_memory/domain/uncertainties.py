"""Settling an uncertainty (CONTRACT §6.5): ``POST /uncertainty/{id}/resolve`` writes the accepted value."""

from __future__ import annotations

from typing import Any, cast

from agent_memory.clock import utcnow
from agent_memory.domain import views
from agent_memory.domain.auth import Caller
from agent_memory.domain.commit import commit
from agent_memory.domain.entity_keys import Speaker
from agent_memory.domain.ports import MemoryReads, MemoryWrites
from agent_memory.domain.reconcile import Diff, Reconciler, Source
from agent_memory.domain.scopes import visible, within_region
from agent_memory.embeddings import Embedder
from agent_memory.errors import BadRequest, NotFound, Unprocessable, run_with_retry
from agent_memory.extraction.model import EntityRef, ExtractedAttribute, Extraction, Invalidation
from agent_memory.rows.refs import EntityKey
from agent_memory.rows.scopes import ScopeSets
from agent_memory.vocabulary import MemoryCategory, names_self_entity
from agent_memory.write_ops import ResolveUncertainty, WritePlan


def _system_reconciler(
    store: MemoryWrites, plan: WritePlan, diff: Diff, scope_sets: ScopeSets, source: Source, reader: list[str]
) -> Reconciler:
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
        reader=reader,
    )


def accept_value(
    reads: MemoryReads,
    store: MemoryWrites,
    embedder: Embedder,
    caller: Caller,
    uncertainty_id: str,
    value: str,
) -> dict[str, Any]:
    """Write the accepted value through the reconciler at the flag's own scope, retire the competing values and settle
    the flag — one transaction. A flag the caller cannot both read and write is 404 (it may quote the values it is
    about), and the response names an old value only where the caller can read it."""
    caller_principal, reader = caller.principal_id, caller.patterns('memory:read')
    row = reads.get_uncertainty(uncertainty_id)
    if row is None or not within_region(row.scope_sets, caller.patterns('memory:write')) or not visible(row.scope_sets, reader):
        raise NotFound('uncertainty not found')
    if row.entity_key is None or not row.key:
        raise Unprocessable('this uncertainty is not about one entity and key, so no value can settle it')
    entity_type, entity_name = row.entity_key
    key = row.key
    if names_self_entity(entity_name) and [entity_type, entity_name] != Speaker(caller_principal, '').key:
        raise BadRequest('a self entity is written only by its own principal; this doubt is theirs to settle')
    subject = EntityRef(type=entity_type, name=entity_name)
    extraction = Extraction(
        attributes=(ExtractedAttribute(entity=subject, key=key, value=value, confidence=1.0),),
        invalidations=(Invalidation(entity=subject, key=key),),
    )

    def attempt() -> Diff:
        plan = WritePlan(now=utcnow(), session_id=None)
        diff = Diff(turn_id=None)
        source = Source('upsert', f'uncertainty:{uncertainty_id}', None, caller_principal, acting_principal=caller.acting_principal_id)
        reconciler = _system_reconciler(store, plan, diff, row.scope_sets, source, reader)
        reconciler.category_override = row_category(store, (entity_type, entity_name), key)
        reconciler.run(extraction)
        if all(op.id != uncertainty_id for op in plan.of(ResolveUncertainty)):
            plan.add(ResolveUncertainty(uncertainty_id, None))
        commit(store, embedder, plan)
        return diff

    diff = run_with_retry(attempt)
    settled = reads.get_uncertainty(uncertainty_id)
    assert settled is not None
    return {'uncertainty': views.uncertainty_detail(settled), 'attributes': diff.attributes, 'corrections': diff.corrections}


def row_category(store: MemoryWrites, entity: EntityKey, key: str) -> MemoryCategory | None:
    """The accepted value keeps the category of the values it settles (or the reconciler's default)."""
    rows = store.live_attributes([(entity, key)], utcnow())
    categories = [cast(MemoryCategory, r.memory_category) for r in rows]  # stored rows hold a valid category
    return categories[0] if categories else None
