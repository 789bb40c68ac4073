"""Every SurrealQL statement about the principals of one context (its own database), CONTRACT §3 / §10.

Keys live in the control database. Deleting a principal first removes its keys, its rate-limit bucket and
its mint row (one transaction: from then on nobody acts as it), then everything bound to it batch by batch — its
sessions with their turns and passages, its turns in other sessions, its self entity with every fact, relation,
action and doubt about it, its traces and its idempotency records — and last the principal row. A deletion cut short
leaves the principal in place without keys, and deleting it again finishes the job; a principal created later with
the same id finds nothing of the old one.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.connection import CONTROL_DB, Database, context_db_name
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.records import entity_rid, rid
from agent_memory.rows.control import PrincipalRow

# The only fields a PATCH may set (their names are interpolated into SurrealQL, values are bound).
MUTABLE_FIELDS = ('display_name', 'kind', 'grants', 'default_scopes')


class PrincipalStore:
    def __init__(self, db: Database, context_id: str) -> None:
        self.db = db
        self.context_id = context_id
        self.database = context_db_name(context_id)
        ensure_migrated(db, self.database, 'context')

    def _q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(self.database, sql, params)

    def get(self, principal_id: str) -> PrincipalRow | None:
        row = self._q('SELECT * FROM ONLY $id;', id=rid('principal', principal_id))[0]
        return to_rows.principal(row) if row else None

    def id_taken_ignoring_case(self, principal_id: str) -> bool:
        """Whether a principal whose id differs from ``principal_id`` at most in case exists (ids are ASCII)."""
        sql = 'SELECT VALUE id FROM principal WHERE string::lowercase(record::id(id)) = $folded LIMIT 1;'
        return bool(self._q(sql, folded=principal_id.lower())[0])

    def by_external_id(self, external_id: str) -> PrincipalRow | None:
        rows = self._q('SELECT * FROM principal WHERE external_id = $ext LIMIT 1;', ext=external_id)[0]
        return to_rows.principal(rows[0]) if rows else None

    def by_display_name(self, display_name: str) -> PrincipalRow | None:
        rows = self._q('SELECT * FROM principal WHERE display_name = $name LIMIT 1;', name=display_name)[0]
        return to_rows.principal(rows[0]) if rows else None

    def list(self) -> list[PrincipalRow]:
        return [to_rows.principal(r) for r in self._q('SELECT * FROM principal ORDER BY created_at, id;')[0] or []]

    def create(self, principal_id: str, row: dict[str, Any]) -> PrincipalRow:
        """Create the principal. Raises ``Conflict`` for a taken id, ``WriteConflict`` for a taken display name or external id."""
        return to_rows.principal(self._q('CREATE $id CONTENT $row RETURN AFTER;', id=rid('principal', principal_id), row=row)[0][0])

    def update(self, principal_id: str, changes: dict[str, Any], now: dt.datetime) -> PrincipalRow | None:
        """Set the given mutable fields; ``None`` when the principal does not exist (UPDATE never creates)."""
        unknown = set(changes) - set(MUTABLE_FIELDS)
        if unknown:
            raise ValueError(f'not mutable: {sorted(unknown)}')
        params: dict[str, Any] = {'id': rid('principal', principal_id), 'now': now}
        assignments = ['updated_at = $now']
        for name, value in changes.items():
            params[f'v_{name}'] = value
            assignments.append(f'{name} = $v_{name}')
        rows = self._q(f'UPDATE $id SET {", ".join(assignments)} RETURN AFTER;', **params)[0]
        return to_rows.principal(rows[0]) if rows else None

    def delete_with_everything(self, principal_id: str) -> bool:
        """Delete the principal, its keys and everything bound to it (module docstring); False if it did not exist."""
        if self.get(principal_id) is None:
            return False
        self.db.query(
            CONTROL_DB,
            'BEGIN TRANSACTION;\n'
            'DELETE api_key WHERE context = $ctx AND principal = $pid;\n'
            'DELETE $bucket, $mint;\n'
            'COMMIT TRANSACTION;',
            {'ctx': self.context_id, 'pid': principal_id, 'bucket': rid('rate_bucket', [self.context_id, principal_id]),
             'mint': rid('key_mint', [self.context_id, principal_id])},
        )  # fmt: skip
        self._delete_bound(principal_id)
        result = self._q(
            'BEGIN TRANSACTION;\n'
            'LET $gone = (DELETE $id RETURN BEFORE);\n'
            f'USE DB {CONTROL_DB};\n'
            'DELETE api_key WHERE context = $ctx AND principal = $pid;\n'
            'RETURN array::len($gone);\n'
            'COMMIT TRANSACTION;',
            id=rid('principal', principal_id),
            ctx=self.context_id,
            pid=principal_id,
        )
        return bool([r for r in result if isinstance(r, int)][-1])

    def _drain(self, select: str, delete: str, **params: Any) -> None:
        """Repeat: select up to ``BATCH`` ids (``$ids``), delete them (one transaction each), until none is left."""
        while ids := self._q(f'{select} LIMIT {BATCH};', **params)[0]:
            self._q(f'BEGIN TRANSACTION; {delete} COMMIT TRANSACTION;', ids=ids, **params)

    def _delete_bound(self, pid: str) -> None:
        turns = 'FOR $t IN $ids { DELETE memory_chunk WHERE turn = $t; }; DELETE $ids;'
        while sessions := self._q(f'SELECT VALUE id FROM session WHERE principal = $pid LIMIT {BATCH};', pid=pid)[0]:
            for session in sessions:
                self._drain('SELECT VALUE id FROM turn WHERE session_key = $key', turns, key=session.id)
            self._q('DELETE $sessions;', sessions=sessions)
        self._drain('SELECT VALUE id FROM turn WHERE principal = $pid', turns, pid=pid)
        for entity in self._q('SELECT VALUE id FROM entity WHERE self_principal = $pid;', pid=pid)[0] or []:
            ref = f'{entity.id[0]}/{entity.id[1]}'
            for table, fields in SELF_ROWS:
                for name in fields:
                    self._drain(f'SELECT VALUE id FROM {table} WHERE {name} = $ref', 'DELETE $ids;', ref=ref)
            self._q('DELETE $entity;', entity=entity_rid(*entity.id))
        for table in ('retrieval_trace', 'response_trace', 'decision_trace'):
            self._drain(f'SELECT VALUE id FROM {table} WHERE principal = $pid', 'DELETE $ids;', pid=pid)
        self._drain('SELECT VALUE id FROM idempotency:[$pid, NONE]..[$pid, {}]', 'DELETE $ids;', pid=pid)


BATCH = 500  # rows per deleting transaction
# The rows about a self entity, by the indexed string reference of their entity (``type/name``).
SELF_ROWS = (
    ('attribute', ('entity_ref',)),
    ('relates_to', ('in_ref', 'out_ref')),
    ('action', ('actor_ref', 'object_ref')),
    ('uncertainty', ('entity_ref',)),
)
