"""Control-plane statements: contexts, hashed API keys, management keys."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from agent_memory.db.connection import CONTROL_DB, Database, context_db_name
from agent_memory.db.migrations import ensure_migrated, forget_migrated
from agent_memory.db.records import rid
from agent_memory.errors import Conflict


@dataclass(frozen=True)
class KeyRecord:
    context: str
    principal: str
    name: str
    hash: str
    grants: dict[str, list[str]] | None
    expires_at: dt.datetime | None


class ControlStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        ensure_migrated(db, CONTROL_DB, 'control')

    def _q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(CONTROL_DB, sql, params)

    def create_context(self, context_id: str, config: dict[str, Any], now: dt.datetime) -> dict[str, Any]:
        try:
            rows = self._q(
                'CREATE $id SET config = $config, created_at = $now, updated_at = $now RETURN AFTER;',
                id=rid('context', context_id),
                config=config,
                now=now,
            )[0]
        except Conflict as exc:
            raise Conflict(f'context {context_id!r} already exists') from exc
        ensure_migrated(self.db, context_db_name(context_id), 'context')
        return dict(rows[0])

    def get_context(self, context_id: str) -> dict[str, Any] | None:
        rows = self._q('SELECT * FROM ONLY $id;', id=rid('context', context_id))[0]
        return dict(rows) if rows else None

    def list_context_ids(self) -> list[str]:
        return [str(v) for v in self._q('SELECT VALUE record::id(id) FROM context ORDER BY id;')[0]]

    def delete_context(self, context_id: str) -> None:
        name = context_db_name(context_id)
        self._q(
            f'DELETE $id; DELETE api_key WHERE context = $ctx; REMOVE DATABASE IF EXISTS {name};',
            id=rid('context', context_id),
            ctx=context_id,
        )
        forget_migrated(self.db, name)

    def put_key(self, key: KeyRecord, now: dt.datetime) -> None:
        self._q(
            'UPSERT $id CONTENT $row;',
            id=rid('api_key', key.hash),
            row={
                'context': key.context,
                'principal': key.principal,
                'name': key.name,
                'hash': key.hash,
                'grants': key.grants,
                'expires_at': key.expires_at,
                'created_at': now,
            },
        )

    def find_key(self, key_hash: str, context_id: str) -> tuple[KeyRecord | None, dict[str, Any] | None]:
        """The key with this hash and the context it names, in one round trip."""
        key_row, context_row = self._q(
            'SELECT * FROM ONLY $key; SELECT * FROM ONLY $ctx;', key=rid('api_key', key_hash), ctx=rid('context', context_id)
        )
        key = None
        if key_row:
            key = KeyRecord(
                key_row['context'], key_row['principal'], key_row['name'], key_row['hash'], key_row.get('grants'), key_row.get('expires_at')
            )
        return key, (dict(context_row) if context_row else None)

    def put_management_key(self, key_hash: str, now: dt.datetime) -> None:
        self._q('UPSERT $id SET hash = $hash, created_at = $now;', id=rid('management_key', key_hash), hash=key_hash, now=now)

    def management_key_hash(self, key_hash: str) -> str | None:
        row = self._q('SELECT VALUE hash FROM ONLY $id;', id=rid('management_key', key_hash))[0]
        return str(row) if row else None
