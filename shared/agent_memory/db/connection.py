"""One SurrealDB connection per process (cold start), shared by every request.

Every query names its database explicitly (``USE NS … DB …`` is prepended), so a warm
container can serve several contexts without connection state leaking between requests.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from functools import lru_cache
from typing import Any

from agent_memory.config import get_settings
from agent_memory.db.sdk import SurrealError, connect
from agent_memory.errors import AgentMemoryError, Conflict, StoreUnavailable, WriteConflict

CONTROL_DB = 'control'
_NAME = re.compile(r'^[A-Za-z0-9_]{1,160}$')
CONFLICT_MARKER = 'am-write-conflict'
ALREADY_APPLIED = 'am-already-applied'
_RETRYABLE = ('read or write conflict', 'transaction conflict', 'Resource busy', CONFLICT_MARKER)


class AlreadyApplied(AgentMemoryError):
    """The write was applied before (e.g. a redelivered SQS message for a turn that is already done)."""


class QueryFailed(AgentMemoryError):
    """A SurrealQL statement failed for a reason that is a bug, not a client error."""


class Database:
    def __init__(self, url: str, namespace: str, user: str | None = None, password: str | None = None) -> None:
        if not _NAME.match(namespace):
            raise ValueError(f'invalid namespace {namespace!r}')
        self.url = url
        self.namespace = namespace
        self._lock = threading.RLock()
        try:
            self._conn: Any = connect(url)
            if user and password:
                self._conn.signin({'username': user, 'password': password})
        except SurrealError as exc:
            raise StoreUnavailable(f'cannot open database: {exc}') from exc

    def query(self, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Run ``sql`` in ``database``; return one result per statement (BEGIN/COMMIT included)."""
        if not _NAME.match(database):
            raise ValueError(f'invalid database name {database!r}')
        text = f'USE NS {self.namespace} DB {database};\n{sql}'
        try:
            with self._lock:
                raw = self._conn.query_raw(text, params or {})
        except SurrealError as exc:
            raise StoreUnavailable(str(exc)) from exc
        except (OSError, ConnectionError) as exc:
            raise StoreUnavailable(str(exc)) from exc
        if 'error' in raw:
            error = raw['error']
            if error.get('kind') in ('Validation', 'Query', 'NotFound', 'Internal'):  # our statement is wrong: a bug, not an outage
                raise QueryFailed(str(error.get('message', error)))
            raise StoreUnavailable(str(error.get('message', error)))
        statements = raw['result'][1:]
        _raise_first_error(statements)
        return [s.get('result') for s in statements]

    def ping(self) -> None:
        self.query(CONTROL_DB, 'RETURN 1;')

    def close(self) -> None:
        with self._lock, contextlib.suppress(SurrealError, NotImplementedError):
            self._conn.close()


def _raise_first_error(statements: list[dict[str, Any]]) -> None:
    errors = [s for s in statements if s.get('status') == 'ERR']
    if not errors:
        return
    # Statements skipped because an earlier one failed say "not executed"; the real cause is elsewhere.
    causes = [e for e in errors if (e.get('details') or {}).get('kind') != 'NotExecuted'] or errors
    message = str(causes[0].get('result'))
    if ALREADY_APPLIED in message:
        raise AlreadyApplied(message)
    # A unique-index clash means a concurrent writer took the same slot (e.g. a turn's seq): re-plan.
    if any(marker in message for marker in _RETRYABLE) or 'already contains' in message:
        raise WriteConflict(message)
    if 'already exists' in message:
        raise Conflict(message)
    raise QueryFailed(message)


def run_with_retry(fn: Any, attempts: int = 5) -> Any:
    """Run ``fn`` again when a concurrent writer invalidated its plan (optimistic concurrency)."""
    for attempt in range(attempts):
        try:
            return fn()
        except WriteConflict:
            if attempt == attempts - 1:
                raise
            time.sleep(0.005 * (2**attempt))
    raise AssertionError('unreachable')


@lru_cache(maxsize=1)
def get_database() -> Database:
    """The process-wide connection, opened lazily on first use and reused while warm."""
    settings = get_settings()
    return Database(settings.db_url, settings.db_namespace, settings.db_user, settings.db_password)


def context_db_name(context_id: str) -> str:
    # Context ids allow '-', database names in our USE prefix do not; '-' never collides with '_' ids
    # because the hex suffix keeps the mapping injective.
    return 'ctx_' + context_id.encode().hex()
