"""Typed rows → camelCase wire shapes (CONTRACT §10). Nothing here touches the database."""

from __future__ import annotations

from typing import Any

from agent_memory.clock import when
from agent_memory.rows.directives import InstructionRow, UncertaintyRow
from agent_memory.rows.memory import ActionRow, AttributeRow, EntityRow, RelationRow, Source


def entity_detail(row: EntityRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'name': row.name,
        'entityType': row.type,
        'memoryCategory': row.memory_category,
        'importance': row.importance,
        'createdAt': when(row.created_at),
        'updatedAt': when(row.updated_at),
    }


def source_detail(source: Source | None) -> dict[str, Any] | None:
    if source is None:
        return None
    return {'kind': source.kind, 'ref': source.ref, 'sessionId': source.session_id, 'principal': source.principal}


def attribute_detail(row: AttributeRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'entity': row.entity,
        'key': row.key,
        'value': row.value,
        'memoryCategory': row.memory_category,
        'importance': row.importance,
        'confidence': row.confidence,
        'validFrom': when(row.valid_from),
        'validUntil': when(row.valid_until),
        'supersedes': row.supersedes,
        'supersededBy': row.superseded_by,
        'source': source_detail(row.source),
        'createdAt': when(row.created_at),
        'tentative': row.tentative,
    }


def relation_detail(row: RelationRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'subject': row.subject,
        'label': row.label,
        'object': row.object,
        'memoryCategory': row.memory_category,
        'importance': row.importance,
        'source': source_detail(row.source),
        'validFrom': when(row.valid_from),
        'validUntil': when(row.valid_until),
        'createdAt': when(row.created_at),
    }


def action_detail(row: ActionRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'actor': row.actor,
        'verb': row.verb,
        'object': row.object,
        'objectText': row.object_text,
        'summary': row.summary,
        'occurredAt': when(row.occurred_at),
        'memoryCategory': row.memory_category,
        'importance': row.importance,
        'validFrom': when(row.valid_from),
        'validUntil': when(row.valid_until),
        'createdAt': when(row.created_at),
    }


def instruction_detail(row: InstructionRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'label': row.label,
        'description': row.description,
        'createdAt': when(row.created_at),
        'mergedCount': row.merged_count,
    }


def uncertainty_detail(row: UncertaintyRow) -> dict[str, Any]:
    return {
        'id': row.ref,
        'about': row.about,
        'reason': row.reason,
        'kind': row.kind,
        'resolved': row.resolved,
        'resolvedBy': row.resolved_by,
        'resolvedAt': when(row.resolved_at),
        'sourceTurn': row.source_turn,
        'entity': row.entity,
        'key': row.key,
        'resolvable': row.entity is not None and row.key is not None,
        'createdAt': when(row.created_at),
    }
