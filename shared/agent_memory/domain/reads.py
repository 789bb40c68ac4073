"""Inspection reads (CONTRACT §10): entities, history, state, profile, uncertainty, me, inspect.

None of these reinforce importance; all return only rows visible to the caller.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from agent_memory.clock import utcnow, when
from agent_memory.domain import views
from agent_memory.domain.auth import Caller
from agent_memory.domain.entity_keys import Speaker, entity_key
from agent_memory.domain.params import MAX_LIMIT, decode_cursor, encode_cursor
from agent_memory.domain.ports import ContextPorts, MemoryReads
from agent_memory.errors import BadRequest, NotFound, NotImplementedYet
from agent_memory.rows.memory import AttributeRow
from agent_memory.rows.refs import EntityKey
from agent_memory.vocabulary import CATEGORIES


def as_key(parts: Sequence[str]) -> EntityKey:
    return parts[0], parts[1]


def list_entities(reads: MemoryReads, caller: Caller, entity_type: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    after = decode_cursor(cursor)
    if after is not None and not (isinstance(after, list) and len(after) == 2 and all(isinstance(a, str) for a in after)):
        raise BadRequest('invalid cursor')
    wanted_type = entity_key(entity_type, 'x')[0] if entity_type else None
    rows = reads.list_entities(caller.patterns('memory:read'), wanted_type, limit + 1, as_key(after) if after else None)
    page = rows[:limit]
    has_more = len(rows) > limit
    next_cursor = encode_cursor(list(page[-1].key)) if has_more and page else None
    return {'entities': [views.entity_detail(r) for r in page], 'page': {'hasMore': has_more, 'nextCursor': next_cursor}}


def entity_view(reads: MemoryReads, caller: Caller, key: EntityKey) -> dict[str, Any]:
    found = reads.entity_view(key, caller.patterns('memory:read'), utcnow())
    if found.entity is None:
        raise NotFound('entity not found')
    return {
        'entity': views.entity_detail(found.entity),
        'attributes': [views.attribute_detail(r) for r in found.attributes],
        'relations': [views.relation_detail(r) for r in found.relations],
    }


def get_entity(reads: MemoryReads, caller: Caller, entity_type: str, name: str) -> dict[str, Any]:
    return entity_view(reads, caller, as_key(entity_key(entity_type, name)))


def history_rows(reads: MemoryReads, caller: Caller, key: EntityKey, attribute: str) -> list[dict[str, Any]]:
    patterns = caller.patterns('memory:read')
    if reads.get_entity(key, patterns) is None:
        raise NotFound('entity not found')
    return [views.attribute_detail(r) for r in reads.attribute_history(key, attribute, patterns)]


def history(reads: MemoryReads, caller: Caller, entity_type: str, name: str, attribute: str) -> dict[str, Any]:
    return {'history': history_rows(reads, caller, as_key(entity_key(entity_type, name)), attribute)}


def state(reads: MemoryReads, caller: Caller, limit: int) -> dict[str, Any]:
    rows = reads.state(CATEGORIES, caller.patterns('memory:read'), utcnow(), limit + 1)
    result: dict[str, Any] = {}
    for category in CATEGORIES:
        result[category] = {
            'entities': [views.entity_detail(r) for r in rows.entities[category][:limit]],
            'attributes': [views.attribute_detail(r) for r in rows.attributes[category][:limit]],
            'relations': [views.relation_detail(r) for r in rows.relations[category][:limit]],
            'actions': [views.action_detail(r) for r in rows.actions[category][:limit]],
        }
    sections: dict[str, dict[str, list[Any]]] = {
        'entities': rows.entities,
        'attributes': rows.attributes,
        'relations': rows.relations,
        'actions': rows.actions,
    }
    truncated = {name: any(len(rows_) > limit for rows_ in by_category.values()) for name, by_category in sections.items()}
    truncated['instructions'] = len(rows.instructions) > limit
    truncated['unknowns'] = len(rows.unknowns) > limit
    result['instructions'] = [views.instruction_detail(r) for r in rows.instructions[:limit]]
    result['unknowns'] = [{'about': u.about, 'reason': u.reason} for u in rows.unknowns[:limit]]
    result['truncated'] = truncated
    return result


def profile(reads: MemoryReads, caller: Caller, limit: int = MAX_LIMIT) -> dict[str, Any]:
    """The caller's own facts as ``selfFacts`` and, again, first in the section of their category: clients that read
    only ``static``/``dynamic``/``preferences`` (the published one) see them too. Each section holds up to ``limit``."""
    patterns = caller.patterns('memory:read')
    rows = reads.profile(as_key(Speaker(caller.principal_id, caller.display_name).key), CATEGORIES, patterns, utcnow(), limit)
    self_rows = rows.self_attributes
    self_ids = {r.ref for r in self_rows}
    by_category = {
        c: ([r for r in self_rows if r.memory_category == c] + [r for r in rows.attributes[c] if r.ref not in self_ids])[:limit]
        for c in CATEGORIES
    }
    names = reads.entity_names([r.entity for found in [self_rows, *by_category.values()] for r in found])

    def entry(row: AttributeRow) -> dict[str, Any]:
        entity_type, entity_name = row.entity_key
        return {
            'key': row.key,
            'value': row.value,
            'entity': names.get(row.entity, entity_name),
            'entityType': entity_type,
            'importance': row.importance,
            'validUntil': when(row.valid_until),
            'tentative': row.tentative,
        }

    return {
        'selfFacts': [entry(r) for r in self_rows],
        'static': [entry(r) for r in by_category['identity']],
        'dynamic': [entry(r) for r in by_category['context']],
        'preferences': [entry(r) for r in by_category['knowledge']],
        'instructions': [views.instruction_detail(r) for r in rows.instructions],
    }


def uncertainties(reads: MemoryReads, caller: Caller, resolved: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    flag = {None: None, '': None, 'true': True, 'false': False}
    if resolved not in flag:
        raise BadRequest('resolved must be true or false')
    after = decode_cursor(cursor)
    if after is not None and not isinstance(after, str):
        raise BadRequest('invalid cursor')
    rows = reads.list_uncertainties(caller.patterns('memory:read'), flag[resolved], limit + 1, after)
    page = rows[:limit]
    has_more = len(rows) > limit
    return {
        'uncertainties': [views.uncertainty_detail(r) for r in page],
        'page': {'hasMore': has_more, 'nextCursor': encode_cursor(page[-1].ref.partition(':')[2]) if has_more and page else None},
    }


def me(caller: Caller) -> dict[str, Any]:
    return {
        'contextId': caller.context_id,
        'principalId': caller.acting_principal_id or caller.principal_id,
        'displayName': caller.display_name,
        'kind': caller.kind,
        'grants': caller.principal_grants,
        'tokenGrants': caller.key_grants,
        'effectiveGrants': caller.grants,
        'delegatedPrincipalId': caller.principal_id if caller.delegated else None,
    }


INSPECT_TIME_PARAMS = ('asOf', 'atInstant', 'validFrom', 'validUntil')


def inspect(ports: ContextPorts, caller: Caller, ref: str | None, times: dict[str, str | None] | None = None) -> dict[str, Any]:
    """One object by ref. Point-in-time inspection is not offered: a time parameter is refused rather than ignored,
    so a caller never mistakes the current value for a past one (``/query`` takes ``asOf``; history has every value)."""
    asked = [name for name, value in (times or {}).items() if value is not None]
    if asked:
        raise BadRequest(f'{", ".join(asked)} is not supported on inspect; use POST /query with asOf, or the attribute history')
    kind, _, rest = (ref or '').partition(':')
    parts = [unquote(part) for part in rest.split('/')]  # a ref percent-encodes the '/' inside its names
    if kind == 'entity' and len(parts) == 2 and all(parts):
        return {'kind': 'entity', **entity_view(ports.reads, caller, as_key(entity_key(parts[0], parts[1])))}
    if kind == 'attribute' and len(parts) == 3 and all(parts):
        rows = history_rows(ports.reads, caller, as_key(entity_key(parts[0], parts[1])), parts[2])
        current = next((r for r in rows if r['supersededBy'] is None and r['validUntil'] is None), None)
        return {'kind': 'attribute', 'current': current, 'history': rows}
    if kind == 'trace' and rest:
        from agent_memory.domain import trace_views  # traces pull in recall and synthesis: only inspect needs them

        record = trace_views.get_trace(ports.trace_history, caller, rest)
        return {**record, 'kind': 'trace', 'traceKind': record['kind']}
    if kind in ('relation', 'passage', 'document') and rest:
        raise NotImplementedYet(f'inspecting {kind} refs is not supported yet')
    raise BadRequest('ref must look like entity:<type>/<name>, attribute:<type>/<name>/<key> or trace:<id>')
