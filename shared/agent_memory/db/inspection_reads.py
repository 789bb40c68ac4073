"""Inspection reads (CONTRACT §10): entities, attribute history, state, profile, instructions and uncertainties.

Every read is visibility-filtered in the statement and returns typed rows (``agent_memory.rows``). A view made of
several reads is sent as one query text: a hosted database charges every round trip, so a view's statements go
together.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from agent_memory.db import to_rows
from agent_memory.db.memory_store import (
    CURRENT,
    CURRENT_EDGE,
    ENTITY,
    INSTRUCTIONS,
    TENTATIVE,
    VISIBLE,
    MemoryStore,
    address_key,
    category_sql,
    entity_ref_key,
    uncertainties_sql,
    visibility_params,
)
from agent_memory.db.records import entity_rid, rid
from agent_memory.rows.directives import UncertaintyRow
from agent_memory.rows.memory import AttributeRow, EntityRow
from agent_memory.rows.refs import EntityKey, entity_key_of
from agent_memory.rows.views import EntityView, ProfileRows, StateRows

T = TypeVar('T')

_ENTITY_VIEW = (
    ENTITY,
    f'SELECT *, {TENTATIVE} OMIT embedding FROM attribute WHERE entity_ref = $e AND {CURRENT} AND {VISIBLE} ORDER BY key, created_at;',
    f'SELECT * FROM relates_to WHERE in_ref = $e AND {CURRENT_EDGE} AND {VISIBLE};',
    f'SELECT * FROM relates_to WHERE out_ref = $e AND {CURRENT_EDGE} AND {VISIBLE};',
)
_STATE_TABLES = ('entity', 'attribute', 'relates_to', 'action')
_SELF_ATTRIBUTES = (
    f'SELECT *, {TENTATIVE} OMIT embedding FROM attribute WHERE entity_ref = $e AND {CURRENT} AND {VISIBLE} '
    'ORDER BY created_at DESC LIMIT $limit;'
)

_SELF_NAME = f'SELECT VALUE name FROM $self_id WHERE {VISIBLE};'
_PRINCIPAL_NAMES = (
    "SELECT record::id(id) AS id, display_name FROM array::map($principals, |$p| type::record('principal', $p)) WHERE id IS NOT NONE;"
)


def _each(rows: Any, convert: Callable[[dict[str, Any]], T]) -> list[T]:
    return [convert(row) for row in rows or []]


class InspectionReads:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def _query(self, sql: str, params: dict[str, Any]) -> list[Any]:
        return self.store.db.query(self.store.database, sql, params)

    def list_entities(self, patterns: Sequence[str], entity_type: str | None, limit: int, after: EntityKey | None) -> list[EntityRow]:
        where = [VISIBLE]
        if entity_type:
            where.append('type = $type')
        if after:
            where.append('id > $after')
        sql = f'SELECT * OMIT embedding FROM entity WHERE {" AND ".join(where)} ORDER BY id ASC LIMIT $limit;'
        params = {'type': entity_type, 'after': entity_rid(*after) if after else None, 'limit': limit}
        return _each(self._query(sql, params | visibility_params(patterns))[0], to_rows.entity)

    def get_entity(self, key: EntityKey, patterns: Sequence[str]) -> EntityRow | None:
        rows = _each(self._query(ENTITY, {'id': entity_rid(*key)} | visibility_params(patterns))[0], to_rows.entity)
        return rows[0] if rows else None

    def attribute_history(self, key: EntityKey, attribute: str, patterns: Sequence[str]) -> list[AttributeRow]:
        sql = f'SELECT *, {TENTATIVE} OMIT embedding FROM attribute WHERE address = $a AND {VISIBLE} ORDER BY created_at DESC, id DESC;'
        return _each(self._query(sql, {'a': address_key(key, attribute)} | visibility_params(patterns))[0], to_rows.attribute)

    def profile(
        self,
        self_key: EntityKey,
        categories: Sequence[str],
        patterns: Sequence[str],
        now: dt.datetime,
        limit: int,
        principals: Sequence[str] = (),
    ) -> ProfileRows:
        """Up to ``limit`` of the caller's self facts, of the current attributes of each of ``categories`` (none asked:
        none read) and of the active instructions, the self entity's shown name and the display names of
        ``principals``, in one round trip (``/profile``, and ``/context``'s prompt block and speakers)."""
        statements = [_SELF_ATTRIBUTES, *(category_sql('attribute', f'$cat{n}') for n, _ in enumerate(categories)), INSTRUCTIONS]
        statements += [_SELF_NAME, _PRINCIPAL_NAMES]
        params = {f'cat{n}': c for n, c in enumerate(categories)} | {'e': entity_ref_key(self_key), 'now': now, 'limit': limit}
        params |= {'self_id': entity_rid(*self_key), 'principals': list(principals)}
        results = self._query('\n'.join(statements), params | visibility_params(patterns))
        named = results[-1] or []
        return ProfileRows(
            self_attributes=_each(results[0], to_rows.attribute),
            attributes={c: _each(results[1 + n], to_rows.attribute) for n, c in enumerate(categories)},
            instructions=_each(results[-3], to_rows.instruction),
            self_name=(results[-2] or [None])[0],
            principal_names={str(r['id']): r['display_name'] for r in named if r.get('display_name')},
        )

    def entity_names(self, refs: Sequence[str]) -> dict[str, str]:
        """Display names by entity ref (refs of entities that no longer exist are left out)."""
        if not refs:
            return {}
        rows = self._query('SELECT id, name FROM $ids;', {'ids': [entity_rid(*entity_key_of(r)) for r in dict.fromkeys(refs)]})[0]
        return {to_rows.required_ref(row['id']): row['name'] for row in rows or []}

    def get_uncertainty(self, uncertainty_id: str) -> UncertaintyRow | None:
        row = self._query('SELECT * FROM ONLY $id;', {'id': rid('uncertainty', uncertainty_id)})[0]
        return to_rows.uncertainty(row) if row else None

    def list_uncertainties(self, patterns: Sequence[str], resolved: bool | None, limit: int, after: str | None) -> list[UncertaintyRow]:
        sql = uncertainties_sql(resolved is not None, bool(after))
        params = {'resolved': resolved, 'after': rid('uncertainty', after) if after else None, 'limit': limit}
        return _each(self._query(sql, params | visibility_params(patterns))[0], to_rows.uncertainty)

    def entity_view(self, key: EntityKey, patterns: Sequence[str], now: dt.datetime) -> EntityView:
        """The entity, its current attributes and its current relations both ways, in one round trip."""
        params = {'id': entity_rid(*key), 'e': entity_ref_key(key), 'now': now} | visibility_params(patterns)
        entity, attributes, outgoing, incoming = self._query('\n'.join(_ENTITY_VIEW), params)
        unique = {str(row['id']): row for row in [*(outgoing or []), *(incoming or [])]}
        relations = sorted(unique.values(), key=lambda row: row['created_at'])
        return EntityView(
            entity=to_rows.entity(entity[0]) if entity else None,
            attributes=_each(attributes, to_rows.attribute),
            relations=_each(relations, to_rows.relation),
        )

    def state(self, categories: Sequence[str], patterns: Sequence[str], now: dt.datetime, limit: int) -> StateRows:
        """Up to ``limit`` visible rows per (category, kind), active instructions and open uncertainties: one round trip."""
        statements = [category_sql(table, f'$cat{n}') for n, _ in enumerate(categories) for table in _STATE_TABLES]
        statements += [INSTRUCTIONS, uncertainties_sql(by_resolved=True, after=False)]
        params = {f'cat{i}': c for i, c in enumerate(categories)} | {'now': now, 'limit': limit, 'resolved': False}
        results = self._query('\n'.join(statements), params | visibility_params(patterns))
        sections = dict(zip([(c, t) for c in categories for t in _STATE_TABLES], results, strict=False))
        return StateRows(
            entities={c: _each(sections[(c, 'entity')], to_rows.entity) for c in categories},
            attributes={c: _each(sections[(c, 'attribute')], to_rows.attribute) for c in categories},
            relations={c: _each(sections[(c, 'relates_to')], to_rows.relation) for c in categories},
            actions={c: _each(sections[(c, 'action')], to_rows.action) for c in categories},
            instructions=_each(results[-2], to_rows.instruction),
            unknowns=_each(results[-1], to_rows.uncertainty),
        )
