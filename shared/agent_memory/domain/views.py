"""Database rows → camelCase wire shapes (CONTRACT §10). Nothing here touches the database."""

from __future__ import annotations

from typing import Any

from agent_memory.db.records import bare, ref, session_id_of, when


def entity_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'name': row['name'],
        'entityType': row['type'],
        'memoryCategory': row['memory_category'],
        'importance': row['importance'],
        'createdAt': when(row['created_at']),
        'updatedAt': when(row['updated_at']),
    }


def source_detail(source: dict[str, Any] | None) -> dict[str, Any] | None:
    if not source:
        return None
    return {
        'kind': source.get('kind'),
        'ref': source.get('ref'),
        'sessionId': session_id_of(source.get('session_id')),
        'principal': source.get('principal'),
    }


def attribute_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'entity': ref(row['entity']),
        'key': row['key'],
        'value': row['value'],
        'memoryCategory': row['memory_category'],
        'importance': row['importance'],
        'confidence': row['confidence'],
        'validFrom': when(row.get('valid_from')),
        'validUntil': when(row.get('valid_until')),
        'supersedes': ref(row.get('supersedes')),
        'supersededBy': ref(row.get('superseded_by')),
        'source': source_detail(row.get('source')),
        'createdAt': when(row['created_at']),
        'tentative': bool(row.get('tentative', False)),
    }


def relation_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'subject': ref(row['in']),
        'label': row['label'],
        'object': ref(row['out']),
        'memoryCategory': row['memory_category'],
        'importance': row['importance'],
        'source': source_detail(row.get('source')),
        'validFrom': when(row.get('valid_from')),
        'validUntil': when(row.get('valid_until')),
        'createdAt': when(row['created_at']),
    }


def action_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'actor': ref(row['actor']),
        'verb': row['verb'],
        'object': ref(row.get('object')),
        'objectText': row.get('object_text'),
        'summary': row['summary'],
        'occurredAt': when(row.get('occurred_at')),
        'memoryCategory': row['memory_category'],
        'importance': row['importance'],
        'validFrom': when(row.get('valid_from')),
        'validUntil': when(row.get('valid_until')),
        'createdAt': when(row['created_at']),
    }


def instruction_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'label': row['label'],
        'description': row['description'],
        'createdAt': when(row['created_at']),
        'mergedCount': row.get('merged_count', 0),
    }


def uncertainty_detail(row: dict[str, Any]) -> dict[str, Any]:
    return {
        'id': ref(row['id']),
        'about': row['about'],
        'reason': row['reason'],
        'kind': row['kind'],
        'resolved': row['resolved'],
        'resolvedBy': bare(row.get('resolved_by')),
        'resolvedAt': when(row.get('resolved_at')),
        'sourceTurn': bare(row.get('source_turn')),
        'entity': ref(row.get('entity')),
        'key': row.get('key'),
        'resolvable': row.get('entity') is not None and row.get('key') is not None,
        'createdAt': when(row['created_at']),
    }
