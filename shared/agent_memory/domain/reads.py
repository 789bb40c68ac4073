"""Inspection reads (CONTRACT §10): entities, history, state, profile, uncertainty, me, inspect.

None of these reinforce importance; all return only rows visible to the caller.
"""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import unquote

from agent_memory.clock import utcnow
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.view_reads import entity_rows, state_rows
from agent_memory.domain import trace_views, views
from agent_memory.domain.auth import Caller
from agent_memory.domain.params import parse_int
from agent_memory.domain.reconcile import Speaker, entity_key
from agent_memory.errors import BadRequest, NotFound, NotImplementedYet
from agent_memory.vocabulary import CATEGORIES

DEFAULT_LIMIT, MAX_LIMIT = 100, 500


def parse_limit(raw: str | None, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    return parse_int(raw, 'limit', 1, maximum, default)


def encode_cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip('=')


def decode_cursor(raw: str | None) -> Any:
    if not raw:
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(raw + '=' * (-len(raw) % 4)))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise BadRequest('invalid cursor') from exc


def list_entities(store: MemoryStore, caller: Caller, entity_type: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    after = decode_cursor(cursor)
    if after is not None and not (isinstance(after, list) and len(after) == 2 and all(isinstance(a, str) for a in after)):
        raise BadRequest('invalid cursor')
    wanted_type = entity_key(entity_type, 'x')[0] if entity_type else None
    rows = store.list_entities(caller.patterns('memory:read'), wanted_type, limit + 1, after)
    page = rows[:limit]
    has_more = len(rows) > limit
    next_cursor = encode_cursor(list(page[-1]['id'].id)) if has_more and page else None
    return {'entities': [views.entity_detail(r) for r in page], 'page': {'hasMore': has_more, 'nextCursor': next_cursor}}


def entity_view(store: MemoryStore, caller: Caller, key: list[str]) -> dict[str, Any]:
    entity, attributes, relations = entity_rows(store, key, caller.patterns('memory:read'), utcnow())
    if entity is None:
        raise NotFound('entity not found')
    return {
        'entity': views.entity_detail(entity),
        'attributes': [views.attribute_detail(r) for r in attributes],
        'relations': [views.relation_detail(r) for r in relations],
    }


def get_entity(store: MemoryStore, caller: Caller, entity_type: str, name: str) -> dict[str, Any]:
    return entity_view(store, caller, entity_key(entity_type, name))


def history_rows(store: MemoryStore, caller: Caller, key: list[str], attribute: str) -> list[dict[str, Any]]:
    patterns = caller.patterns('memory:read')
    if store.get_entity(key, patterns) is None:
        raise NotFound('entity not found')
    return [views.attribute_detail(r) for r in store.attribute_history(key, attribute, patterns)]


def history(store: MemoryStore, caller: Caller, entity_type: str, name: str, attribute: str) -> dict[str, Any]:
    return {'history': history_rows(store, caller, entity_key(entity_type, name), attribute)}


def delete_entity(store: MemoryStore, caller: Caller, entity_type: str, name: str) -> int:
    key, region, read = entity_key(entity_type, name), caller.patterns('memory:forget'), caller.patterns('memory:read')
    if store.get_entity(key, read) is None or store.get_entity(key, region) is None:  # unreadable answers as absent
        raise NotFound('entity not found')
    return store.close_entity_facts(key, utcnow(), region, read)


def state(store: MemoryStore, caller: Caller, limit: int) -> dict[str, Any]:
    rows = state_rows(store, CATEGORIES, caller.patterns('memory:read'), utcnow(), limit + 1)
    truncated = dict.fromkeys(('entities', 'attributes', 'relations', 'actions', 'instructions', 'unknowns'), False)
    result: dict[str, Any] = {}
    shapes = (
        ('entities', 'entity', views.entity_detail),
        ('attributes', 'attribute', views.attribute_detail),
        ('relations', 'relates_to', views.relation_detail),
        ('actions', 'action', views.action_detail),
    )
    for category in CATEGORIES:
        section: dict[str, Any] = {}
        for name, table, shape in shapes:
            current = rows.current[(category, table)]
            truncated[name] = truncated[name] or len(current) > limit
            section[name] = [shape(r) for r in current[:limit]]
        result[category] = section
    truncated['instructions'] = len(rows.instructions) > limit
    truncated['unknowns'] = len(rows.unknowns) > limit
    result['instructions'] = [views.instruction_detail(r) for r in rows.instructions[:limit]]
    result['unknowns'] = [{'about': u['about'], 'reason': u['reason']} for u in rows.unknowns[:limit]]
    result['truncated'] = truncated
    return result


def profile(store: MemoryStore, caller: Caller, limit: int = MAX_LIMIT) -> dict[str, Any]:
    patterns, now = caller.patterns('memory:read'), utcnow()
    self_rows = store.self_attributes(Speaker(caller.principal_id, caller.display_name).key, patterns, now, limit)
    self_ids = {str(r['id']) for r in self_rows}
    by_category = {
        c: [r for r in store.current_by_category('attribute', c, patterns, now, limit) if str(r['id']) not in self_ids] for c in CATEGORIES
    }
    names = store.entity_names([r['entity'] for rows in [self_rows, *by_category.values()] for r in rows])

    def entry(row: dict[str, Any]) -> dict[str, Any]:
        entity = row['entity']
        return {
            'key': row['key'],
            'value': row['value'],
            'entity': names.get(str(entity), entity.id[1]),
            'entityType': entity.id[0],
            'importance': row['importance'],
            'validUntil': views.attribute_detail(row)['validUntil'],
            'tentative': bool(row.get('tentative')),
        }

    return {
        'selfFacts': [entry(r) for r in self_rows],
        'static': [entry(r) for r in by_category['identity']],
        'dynamic': [entry(r) for r in by_category['context']],
        'preferences': [entry(r) for r in by_category['knowledge']],
        'instructions': [views.instruction_detail(r) for r in store.list_instructions(patterns, limit)],
    }


def uncertainties(store: MemoryStore, caller: Caller, resolved: str | None, limit: int, cursor: str | None) -> dict[str, Any]:
    flag = {None: None, '': None, 'true': True, 'false': False}
    if resolved not in flag:
        raise BadRequest('resolved must be true or false')
    after = decode_cursor(cursor)
    if after is not None and not isinstance(after, str):
        raise BadRequest('invalid cursor')
    rows = store.list_uncertainties(caller.patterns('memory:read'), flag[resolved], limit + 1, after)
    page = rows[:limit]
    has_more = len(rows) > limit
    return {
        'uncertainties': [views.uncertainty_detail(r) for r in page],
        'page': {'hasMore': has_more, 'nextCursor': encode_cursor(str(page[-1]['id'].id)) if has_more and page else None},
    }


def me(caller: Caller) -> dict[str, Any]:
    return {
        'principalId': caller.acting_principal_id or caller.principal_id,
        'displayName': caller.display_name,
        'kind': caller.kind,
        'grants': caller.principal_grants,
        'tokenGrants': caller.key_grants,
        'effectiveGrants': caller.grants,
        'delegatedPrincipalId': caller.principal_id if caller.delegated else None,
    }


INSPECT_TIME_PARAMS = ('asOf', 'atInstant', 'validFrom', 'validUntil')


def inspect(store: MemoryStore, caller: Caller, ref: str | None, times: dict[str, str | None] | None = None) -> dict[str, Any]:
    """One object by ref. Point-in-time inspection is not offered: a time parameter is refused rather than ignored,
    so a caller never mistakes the current value for a past one (``/query`` takes ``asOf``; history has every value)."""
    asked = [name for name, value in (times or {}).items() if value is not None]
    if asked:
        raise BadRequest(f'{", ".join(asked)} is not supported on inspect; use POST /query with asOf, or the attribute history')
    kind, _, rest = (ref or '').partition(':')
    parts = [unquote(part) for part in rest.split('/')]  # a ref percent-encodes the '/' inside its names
    if kind == 'entity' and len(parts) == 2 and all(parts):
        return {'kind': 'entity', **entity_view(store, caller, entity_key(parts[0], parts[1]))}
    if kind == 'attribute' and len(parts) == 3 and all(parts):
        rows = history_rows(store, caller, entity_key(parts[0], parts[1]), parts[2])
        current = next((r for r in rows if r['supersededBy'] is None and r['validUntil'] is None), None)
        return {'kind': 'attribute', 'current': current, 'history': rows}
    if kind == 'trace' and rest:
        record = trace_views.get_trace(store, caller, rest)
        return {**record, 'kind': 'trace', 'traceKind': record['kind']}
    if kind in ('relation', 'passage', 'document') and rest:
        raise NotImplementedYet(f'inspecting {kind} refs is not supported yet')
    raise BadRequest('ref must look like entity:<type>/<name>, attribute:<type>/<name>/<key> or trace:<id>')
