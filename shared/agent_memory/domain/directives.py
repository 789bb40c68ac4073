"""Instructions (CONTRACT §6.4) and uncertainties (§6.5) as domain operations.

Instructions are never revoked or superseded: a reversal is a new active instruction beside the
old one. The only deactivation is de-duplication — the same label and description (compared
case-insensitively) in an overlapping scope merges into the existing row.
"""

from __future__ import annotations

from typing import Any

from agent_memory.db.connection import run_with_retry
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import rid
from agent_memory.domain import views
from agent_memory.domain.ids import new_id, utcnow
from agent_memory.domain.scopes import ScopeSets, overlaps
from agent_memory.domain.vocabulary import normalise_name
from agent_memory.errors import BadRequest, NotFound


def _fold(text: str) -> str:
    return normalise_name(text)


def add_instruction(
    store: MemoryStore, label: str, description: str, scope_sets: ScopeSets, source_turn: str | None = None
) -> tuple[dict[str, Any], bool]:
    """Store a directive; return (instruction, merged) where merged means an existing row absorbed it."""
    if not label.strip() or not description.strip():
        raise BadRequest('an instruction needs a label and a description')

    def attempt() -> tuple[dict[str, Any], bool]:
        now = utcnow()
        turn = rid('turn', source_turn) if source_turn else None
        candidates = store.instructions_matching(_fold(label), _fold(description))
        match = next((c for c in candidates if overlaps(c['scope_sets'], scope_sets)), None)
        if match is not None:
            return views.instruction_detail(store.merge_instruction(str(match['id'].id), turn, now)), True
        instruction_id = new_id()
        row = {
            'label': label.strip(),
            'description': description.strip(),
            'label_key': _fold(label),
            'description_key': _fold(description),
            'active': True,
            'source_turn': turn,
            'source_turns': [turn] if turn else [],
            'merged_count': 0,
            'scope_sets': scope_sets,
            'created_at': now,
            'updated_at': now,
        }
        store.create_instruction(instruction_id, row, [str(c['id'].id) for c in candidates])
        created = store.get_instruction(instruction_id)
        assert created is not None
        return views.instruction_detail(created), False

    result: tuple[dict[str, Any], bool] = run_with_retry(attempt)
    return result


def record_uncertainty(
    store: MemoryStore, about: str, reason: str, kind: str, scope_sets: ScopeSets,
    source_turn: str | None = None, entity: list[str] | None = None, key: str | None = None,
) -> dict[str, Any]:  # fmt: skip
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
