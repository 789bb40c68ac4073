"""A content snapshot of one context: every row of every table in its database, and its control-plane rows.

"Nothing changed" after a rejected request compares snapshots, not row counts: a stray update of any field (a
value, an importance, a validity bound, an extraction status, a trace) changes the snapshot as surely as an
insert or a delete. The table list comes from the database itself, so a table added by a later migration is
covered without touching this module. Left out, on purpose: rate-limit buckets (every request spends a token,
accepted or not) and other contexts' rows.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Protocol

from agent_memory.db.connection import CONTROL_DB


class ContextStore(Protocol):
    """What a snapshot needs of a context's repository: its connection, database name and context id."""

    db: Any
    database: str
    context_id: str


def _digest(rows: list[dict[str, Any]]) -> str:
    """Row count and a hash of every field of every row, independent of the order the engine returns them in."""
    encoded = '\n'.join(sorted(json.dumps(row, sort_keys=True, default=repr) for row in rows))
    return f'{len(rows)} rows {hashlib.sha256(encoded.encode()).hexdigest()[:16]}'


def snapshot(store: ContextStore) -> dict[str, str]:
    """``{table: "<n> rows <digest>"}`` for the context's tables, plus ``control.context`` and ``control.api_key``."""
    tables = sorted(store.db.query(store.database, 'INFO FOR DB;')[-1]['tables'])
    statements = ' '.join(f'SELECT * FROM {table};' for table in tables)
    result = dict(zip(tables, (_digest(rows) for rows in store.db.query(store.database, statements)), strict=True))
    context, keys = store.db.query(
        CONTROL_DB,
        'SELECT * FROM type::record("context", $cid); SELECT * FROM api_key WHERE context = $cid;',
        {'cid': store.context_id},
    )
    result['control.context'], result['control.api_key'] = _digest(context), _digest(keys)
    return result
