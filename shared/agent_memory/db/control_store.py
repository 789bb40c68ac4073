"""Control-plane statements: contexts, hashed API keys, management keys.

An API key record is keyed by the HMAC of its secret (``api_key:<digest>``), so authentication is
one primary-key read and the plaintext never reaches the database. Minting checks, in the same
transaction, that the context and the key's principal (in the context's own database) still exist,
so a key can never be created for a context or principal that is being deleted.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

from agent_memory.db.connection import CONTROL_DB, Database, QueryFailed, context_db_name
from agent_memory.db.migrations import ensure_migrated, forget_migrated
from agent_memory.db.records import rid
from agent_memory.errors import Conflict, NotFound, run_with_retry
from agent_memory.rows.control import CallerRows, ContextRow, KeyRecord, RateDefaults

T = TypeVar('T')

# Markers THROWn inside transactions and mapped back to domain errors.
_CONTEXT_MISSING = 'am-context-missing'
_PRINCIPAL_MISSING = 'am-principal-missing'
_KEY_EXISTS = 'am-key-exists'
_KEY_MISSING = 'am-key-missing'
_KEY_CAP = 'am-key-cap'
MAX_KEYS_PER_PRINCIPAL = 100  # expired keys count until deleted: each is a row

# The first write claims the principal's mint row: two mints of one principal running at once both write it and one
# fails with a transaction conflict (retried), so the count below is never read by two mints that both insert.
_MINT = """
BEGIN TRANSACTION;
UPSERT $mint_id SET context = $ctx, minted_at = $now RETURN NONE;
IF !record::exists($ctx_id) { THROW 'am-context-missing'; };
LET $held = (SELECT VALUE name FROM api_key WHERE context = $ctx AND principal = $principal);
IF $name INSIDE $held { THROW 'am-key-exists'; };
IF array::len($held) >= $max_keys { THROW 'am-key-cap'; };
USE DB %(context_db)s;
IF !record::exists($principal_id) { THROW 'am-principal-missing'; };
USE DB %(control_db)s;
CREATE $id CONTENT $row RETURN NONE;
COMMIT TRANSACTION;
"""

_ROTATE = """
BEGIN TRANSACTION;
LET $gone = (DELETE $old RETURN BEFORE);
IF array::len($gone) = 0 { THROW 'am-key-missing'; };
CREATE $id CONTENT $row RETURN NONE;
COMMIT TRANSACTION;
"""

_PATCH_CONFIG = """
BEGIN TRANSACTION;
IF !record::exists($id) { THROW 'am-context-missing'; };
-- 'am-write-conflict' makes the connection raise WriteConflict, so the caller re-reads and re-merges
IF (SELECT VALUE updated_at FROM ONLY $id) != $seen { THROW 'am-write-conflict: context changed'; };
UPDATE $id SET config = $config, updated_at = $now RETURN NONE;
COMMIT TRANSACTION;
"""


def key_record(row: dict[str, Any]) -> KeyRecord:
    return KeyRecord(
        row['context'], row['principal'], row['name'], row['hash'], row.get('grants'), row.get('expires_at'), row.get('created_at')
    )


def _key_row(key: KeyRecord, now: dt.datetime) -> dict[str, Any]:
    return {
        'context': key.context,
        'principal': key.principal,
        'name': key.name,
        'hash': key.hash,
        'grants': key.grants,
        'expires_at': key.expires_at,
        'created_at': now,
    }


def _mapped(fn: Callable[[], T]) -> T:
    """Run ``fn`` (retrying write conflicts) and turn the markers THROWn by our transactions into domain errors."""
    try:
        result: T = run_with_retry(fn)
    except QueryFailed as exc:
        message = str(exc)
        if _CONTEXT_MISSING in message:
            raise NotFound('context not found') from exc
        if _PRINCIPAL_MISSING in message:
            raise NotFound('principal not found') from exc
        if _KEY_EXISTS in message:
            raise Conflict('a key with that name already exists for this principal') from exc
        if _KEY_MISSING in message:
            raise NotFound('key not found') from exc
        if _KEY_CAP in message:
            raise Conflict(f'this principal already holds {MAX_KEYS_PER_PRINCIPAL} keys (the maximum); delete one first') from exc
        raise
    return result


class ControlStore:
    def __init__(self, db: Database) -> None:
        self.db = db
        ensure_migrated(db, CONTROL_DB, 'control')

    def _q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(CONTROL_DB, sql, params)

    # ---- deployment ---------------------------------------------------------------------------
    def resolve_caller(self, key_hash: str, context_id: str, target: str | None, throttle: RateDefaults | None,
                       now: dt.datetime, session: str | None = None) -> CallerRows:  # fmt: skip
        """Everything a data-plane request needs to know about its caller, in one round trip (``db/caller_lookup.py``)."""
        from agent_memory.db.caller_lookup import resolve_caller

        return resolve_caller(self.db, key_hash, context_id, target, throttle, now, session)

    def key_context(self, key_hash: str) -> str | None:
        """The context a key belongs to, or None for an unknown key (``db/caller_lookup.py``)."""
        from agent_memory.db.caller_lookup import key_context

        return key_context(self.db, key_hash)

    def claim_embedding_model(self, model: str, dimension: int, now: dt.datetime) -> tuple[str, int]:
        """Record the embedding model on first start; return what the database was built with."""
        row = self._q(
            'UPSERT deployment:embedding SET embedding_model = embedding_model ?? $model, '
            'embedding_dimension = embedding_dimension ?? $dimension, created_at = created_at ?? $now RETURN AFTER;',
            model=model,
            dimension=dimension,
            now=now,
        )[0][0]
        return str(row['embedding_model']), int(row['embedding_dimension'])

    # ---- contexts -----------------------------------------------------------------------------
    def create_context(self, context_id: str, config: dict[str, Any], now: dt.datetime, description: str | None = None) -> ContextRow:
        try:
            rows = self._q(
                'CREATE $id SET config = $config, description = $description, created_at = $now, updated_at = $now RETURN AFTER;',
                id=rid('context', context_id),
                config=config,
                description=description,
                now=now,
            )[0]
        except Conflict as exc:
            raise Conflict(f'context {context_id!r} already exists') from exc
        ensure_migrated(self.db, context_db_name(context_id), 'context')
        return _context_row(rows[0])

    def get_context(self, context_id: str) -> ContextRow | None:
        row = self._q('SELECT * FROM ONLY $id;', id=rid('context', context_id))[0]
        return _context_row(row) if row else None

    def list_context_ids(self) -> list[str]:
        return [str(v) for v in self._q('SELECT VALUE record::id(id) FROM context ORDER BY id;')[0]]

    def list_contexts(self) -> list[ContextRow]:
        """Every context, ordered by id."""
        return [_context_row(r) for r in self._q('SELECT * FROM context ORDER BY id;')[0] or []]

    def update_context_config(self, context_id: str, seen_updated_at: dt.datetime, config: dict[str, Any], now: dt.datetime) -> None:
        """Replace the stored config override if nobody changed the context since ``seen_updated_at``.

        Raises ``WriteConflict`` when it changed (the caller re-reads and re-merges), ``NotFound`` when it is gone.
        """
        try:
            self._q(_PATCH_CONFIG, id=rid('context', context_id), seen=seen_updated_at, config=config, now=now)
        except QueryFailed as exc:
            if _CONTEXT_MISSING in str(exc):
                raise NotFound('context not found') from exc
            raise

    def restore_context_settings(self, context_id: str, config: dict[str, Any], description: str | None, now: dt.datetime) -> None:
        """Replace a context's config override and description (an import restores them as exported)."""
        self._q('UPDATE $id SET config = $config, description = $description, updated_at = $now RETURN NONE;',
                id=rid('context', context_id), config=config, description=description, now=now)  # fmt: skip

    def delete_context(self, context_id: str) -> bool:
        """Drop the context: its control record and keys (one transaction), then its database. False if it did not exist."""
        name = context_db_name(context_id)
        result = self._q(
            'BEGIN TRANSACTION;\n'
            'LET $gone = (DELETE $id RETURN BEFORE);\n'
            'DELETE api_key WHERE context = $ctx;\n'
            'DELETE key_mint WHERE context = $ctx;\n'
            'RETURN array::len($gone);\n'
            'COMMIT TRANSACTION;\n'
            f'REMOVE DATABASE IF EXISTS {name};',
            id=rid('context', context_id),
            ctx=context_id,
        )
        forget_migrated(self.db, name)
        return bool([r for r in result if isinstance(r, int)][-1])

    # ---- context API keys ---------------------------------------------------------------------
    def put_key(self, key: KeyRecord, now: dt.datetime) -> None:
        """Register ``key``, replacing any other key of the same principal with the same name (bootstrap keys)."""
        self._q(
            'BEGIN TRANSACTION;\n'
            'DELETE api_key WHERE context = $ctx AND principal = $principal AND name = $name AND id != $id;\n'
            'UPSERT $id CONTENT $row RETURN NONE;\n'
            'COMMIT TRANSACTION;',
            id=rid('api_key', key.hash),
            ctx=key.context,
            principal=key.principal,
            name=key.name,
            row=_key_row(key, now),
        )

    def create_key(self, key: KeyRecord, now: dt.datetime) -> KeyRecord:
        """Create a new key; 404 if the context or principal is gone, 409 if the principal already has a key of that name."""
        sql = _MINT % {'context_db': context_db_name(key.context), 'control_db': CONTROL_DB}
        params = {
            'id': rid('api_key', key.hash),
            'ctx_id': rid('context', key.context),
            'ctx': key.context,
            'principal': key.principal,
            'principal_id': rid('principal', key.principal),
            'mint_id': rid('key_mint', [key.context, key.principal]),
            'now': now,
            'name': key.name,
            'row': _key_row(key, now),
            'max_keys': MAX_KEYS_PER_PRINCIPAL,
        }
        _mapped(lambda: self._q(sql, **params))
        return KeyRecord(key.context, key.principal, key.name, key.hash, key.grants, key.expires_at, now)

    def rotate_key(self, old: KeyRecord, new_hash: str, expires_at: dt.datetime | None, now: dt.datetime) -> KeyRecord:
        """Replace ``old`` by a record for the new secret in one transaction: the old secret is dead when this returns."""
        new = KeyRecord(old.context, old.principal, old.name, new_hash, old.grants, expires_at, now)
        _mapped(lambda: self._q(_ROTATE, old=rid('api_key', old.hash), id=rid('api_key', new_hash), row=_key_row(new, now)))
        return new

    def get_key(self, key_hash: str) -> KeyRecord | None:
        row = self._q('SELECT * FROM ONLY $id;', id=rid('api_key', key_hash))[0]
        return key_record(row) if row else None

    def key_by_name(self, context_id: str, principal_id: str, name: str) -> KeyRecord | None:
        rows = self._q(
            'SELECT * FROM api_key WHERE context = $ctx AND principal = $principal AND name = $name LIMIT 1;',
            ctx=context_id,
            principal=principal_id,
            name=name,
        )[0]
        return key_record(rows[0]) if rows else None

    def list_keys(self, context_id: str, principal_id: str) -> list[KeyRecord]:
        rows = self._q(
            'SELECT * FROM api_key WHERE context = $ctx AND principal = $principal ORDER BY name;', ctx=context_id, principal=principal_id
        )[0]
        return [key_record(r) for r in rows or []]

    def delete_key(self, context_id: str, principal_id: str, name: str) -> bool:
        rows = self._q(
            'DELETE api_key WHERE context = $ctx AND principal = $principal AND name = $name RETURN BEFORE;',
            ctx=context_id,
            principal=principal_id,
            name=name,
        )[0]
        return bool(rows)

    # ---- management keys ----------------------------------------------------------------------
    def replace_management_keys(self, key_hashes: list[str], now: dt.datetime) -> None:
        """Make ``key_hashes`` the whole set of management keys, in one transaction: any other key is revoked."""
        ids = [rid('management_key', h) for h in key_hashes]
        run_with_retry(
            lambda: self._q(
                'BEGIN TRANSACTION;\n'
                'DELETE management_key WHERE id NOTINSIDE $ids;\n'
                'FOR $id IN $ids { UPSERT $id SET hash = record::id($id), created_at = created_at ?? $now; };\n'
                'COMMIT TRANSACTION;',
                ids=ids,
                now=now,
            )
        )

    def management_key_hash(self, key_hash: str) -> str | None:
        row = self._q('SELECT VALUE hash FROM ONLY $id;', id=rid('management_key', key_hash))[0]
        return str(row) if row else None

    def management_key_with_token(self, key_hash: str, now: dt.datetime, per_minute: int, burst: int) -> tuple[str | None, float]:
        """The stored hash of a management key and, for a known key with ``per_minute`` > 0, a token taken from its
        bucket, in one transaction: (hash or None, seconds to wait; 0 when a token was taken)."""
        from agent_memory.db.rate_limit_store import TAKE_TOKEN

        sql = (
            'BEGIN TRANSACTION;\n'
            'LET $h = (SELECT VALUE hash FROM ONLY $key);\n'
            'LET $take = $h != NONE AND $per_minute > 0;\n'
            'LET $id = $bucket; LET $burst = <float> $max_burst; LET $rate = $per_minute / 60.0;\n'
            f'{TAKE_TOKEN}\n'
            'RETURN { hash: $h, wait: $wait };\n'
            'COMMIT TRANSACTION;'
        )
        # Context ids are never empty, so ['', …] buckets are the management API's own.
        params = {'key': rid('management_key', key_hash), 'bucket': rid('rate_bucket', ['', f'management/{key_hash[:32]}']),
                  'per_minute': per_minute, 'max_burst': burst, 'now': now}  # fmt: skip
        row = run_with_retry(lambda: self._q(sql, **params))[-2]
        return (str(row['hash']) if row.get('hash') else None), float(row.get('wait') or 0.0)


def _context_row(row: dict[str, Any]) -> ContextRow:
    """``to_rows.context``, imported on first use: ``to_rows`` builds every row type, and a health check's cold start
    (which builds this store to register the management keys) reads no context."""
    from agent_memory.db import to_rows

    return to_rows.context(row)
