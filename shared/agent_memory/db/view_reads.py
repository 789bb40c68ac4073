"""Views made of several reads, sent as one query text: one database round trip per view.

A hosted database charges every round trip (issue 12: reads ≤ 3 per request, auth included), so a view's
statements go together; each statement is the same set-based, visibility-filtered SELECT a single read uses.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.db.memory_store import (
    CURRENT,
    CURRENT_EDGE,
    ENTITY,
    FACT_TABLES,
    INSTRUCTIONS,
    TENTATIVE,
    VISIBLE,
    MemoryStore,
    category_sql,
    entity_ref_key,
    uncertainties_sql,
    visibility_params,
)
from agent_memory.db.records import entity_rid

_ENTITY_VIEW = (
    ENTITY,
    f'SELECT *, {TENTATIVE} OMIT embedding FROM attribute WHERE entity_ref = $e AND {CURRENT} AND {VISIBLE} ORDER BY key, created_at;',
    f'SELECT * FROM relates_to WHERE in_ref = $e AND {CURRENT_EDGE} AND {VISIBLE};',
    f'SELECT * FROM relates_to WHERE out_ref = $e AND {CURRENT_EDGE} AND {VISIBLE};',
)


@dataclass(frozen=True)
class StateRows:
    current: dict[tuple[str, str], list[dict[str, Any]]]  # (category, table) -> newest current rows
    instructions: list[dict[str, Any]]
    unknowns: list[dict[str, Any]]  # open uncertainties


def state_rows(store: MemoryStore, categories: Sequence[str], patterns: Sequence[str], now: dt.datetime, limit: int) -> StateRows:
    """Up to ``limit`` visible rows per (category, table), active instructions and open uncertainties."""
    sections = [(category, table) for category in categories for table in FACT_TABLES]
    statements = [category_sql(table, f'$cat{n}') for n, _ in enumerate(categories) for table in FACT_TABLES]
    statements += [INSTRUCTIONS, uncertainties_sql(by_resolved=True, after=False)]
    params = {f'cat{i}': c for i, c in enumerate(categories)} | {'now': now, 'limit': limit, 'resolved': False}
    results = store.db.query(store.database, '\n'.join(statements), params | visibility_params(patterns))
    rows = [list(r or []) for r in results]
    return StateRows(current=dict(zip(sections, rows, strict=False)), instructions=rows[-2], unknowns=rows[-1])


def entity_rows(store: MemoryStore, entity_key: list[str], patterns: Sequence[str],
                now: dt.datetime) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[dict[str, Any]]]:  # fmt: skip
    """The visible entity (None when absent or invisible), its current attributes and its current relations both ways."""
    params = {'id': entity_rid(*entity_key), 'e': entity_ref_key(entity_key), 'now': now} | visibility_params(patterns)
    entity, attributes, outgoing, incoming = store.db.query(store.database, '\n'.join(_ENTITY_VIEW), params)
    unique = {str(row['id']): row for row in [*(outgoing or []), *(incoming or [])]}
    relations = sorted(unique.values(), key=lambda row: row['created_at'])
    return (dict(entity[0]) if entity else None), list(attributes or []), relations
