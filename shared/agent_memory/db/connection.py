"""One SurrealDB connection per process (cold start), shared by every request.

Every query names its database explicitly (``USE NS … DB …`` is prepended), so a warm
container can serve several contexts without connection state leaking between requests.

A hosted database (ws/wss) can drop the connection or restart while the container stays warm: a
connection found closed is rebuilt (and signed in again) before the next query, and one that fails
during a query is discarded, the request answers 503 (``StoreUnavailable``) and the next request
reconnects. A query is never re-sent by this layer: after a failure mid-query nobody knows whether
the transaction committed, so the client retries (with its ``Idempotency-Key`` for writes).
"""

from __future__ import annotations

import contextlib
import re
import threading
from functools import lru_cache
from typing import Any

from agent_memory.config import get_settings
from agent_memory.db.sdk import SurrealError, blocking_ws, connect
from agent_memory.errors import AgentMemoryError, AlreadyApplied, Conflict, StoreUnavailable, WriteConflict

CONTROL_DB = 'control'
_NAME = re.compile(r'[A-Za-z0-9_]{1,160}')
CONFLICT_MARKER = 'am-write-conflict'
ALREADY_APPLIED = 'am-already-applied'


class QueryFailed(AgentMemoryError):
    """A SurrealQL statement failed for a reason that is a bug, not a client error."""


def is_hosted(url: str) -> bool:
    """Whether ``url`` names a database over the network (every round trip paid), not the embedded engine."""
    return url.split('://', 1)[0].lower() in ('ws', 'wss', 'http', 'https')


class Database:
    """``user_level`` says where ``user`` is defined: ``root`` (``DEFINE USER … ON ROOT``) or ``namespace`` (``DEFINE USER …
    ON NAMESPACE`` in ``namespace``: the sign-in names it). A namespace EDITOR is all the service needs: it creates and
    removes one database per context and defines their schema (docs/deploy.md)."""

    def __init__(self, url: str, namespace: str, user: str | None = None, password: str | None = None,
                 timeout_seconds: float | None = None, user_level: str = 'root') -> None:  # fmt: skip
        if not _NAME.fullmatch(namespace):
            raise ValueError(f'invalid namespace {namespace!r}')
        if user_level not in ('root', 'namespace'):
            raise ValueError(f'invalid user level {user_level!r}')
        self.url = url
        self.namespace = namespace
        self._credentials: dict[str, str] | None = None
        if user and password:
            self._credentials = {'username': user, 'password': password}
            if user_level == 'namespace':
                self._credentials['namespace'] = namespace
        self._remote = url.split('://', 1)[0] in ('ws', 'wss')
        self.hosted = is_hosted(url)
        if timeout_seconds is not None:
            # The SDK has no per-connection setting: its ws transport reads this module constant on every RPC.
            blocking_ws._RPC_RECV_TIMEOUT = timeout_seconds
        self._lock = threading.RLock()
        self._conn: Any = None
        with self._lock:
            self._connection()

    def _connection(self) -> Any:
        """The open connection; a new one (signed in) when there is none or the server closed it."""
        if self._conn is not None and self._remote and _socket_closed(self._conn):
            self._discard()
        if self._conn is None:
            try:
                self._conn = connect(self.url)
                if self._credentials:
                    self._conn.signin(self._credentials)
            except (SurrealError, OSError) as exc:
                if self._conn is not None:
                    self._discard()
                raise StoreUnavailable(f'cannot open database: {exc}') from exc
        return self._conn

    def _discard(self) -> None:
        conn, self._conn = self._conn, None
        with contextlib.suppress(Exception):  # it is being thrown away because it already failed
            conn.close()

    def query(self, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        """Run ``sql`` in ``database``; return one result per statement (BEGIN/COMMIT included)."""
        if not _NAME.fullmatch(database):
            raise ValueError(f'invalid database name {database!r}')
        text = f'USE NS {self.namespace} DB {database};\n{sql}'
        with self._lock:
            connection = self._connection()
            try:
                raw = connection.query_raw(text, params or {})
            except (SurrealError, OSError) as exc:
                if self._remote:
                    self._discard()  # a timed-out or broken socket is out of step: the next request reconnects
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
        with self._lock:
            if self._conn is not None:
                self._discard()


def _socket_closed(conn: Any) -> bool:
    """Whether the SDK's ws socket (a ``websockets`` connection, a transitive dependency) is no longer open."""
    socket = getattr(conn, 'socket', None)
    return socket is not None and socket.state.name != 'OPEN'


def _raise_first_error(statements: list[dict[str, Any]]) -> None:
    errors = [s for s in statements if s.get('status') == 'ERR']
    if not errors:
        return
    # Statements skipped because an earlier one failed say "not executed"; the real cause is elsewhere.
    causes = [e for e in errors if (e.get('details') or {}).get('kind') != 'NotExecuted'] or errors
    raise engine_error(str(causes[0].get('result')))


# The text of a failed statement → the error it becomes; the first marker found in the message wins, anything else is
# a QueryFailed (a 500). The engine's wording is matched case-sensitively, and every row has a test that makes the real
# engine say it (tests/integration/test_engine_errors.py): an engine upgrade that rewords a message fails that test
# instead of turning a retryable conflict into a 500.
ENGINE_MESSAGES: tuple[tuple[str, type[AgentMemoryError]], ...] = (
    (ALREADY_APPLIED, AlreadyApplied),  # our THROW: the write was applied before (a redelivered job)
    (CONFLICT_MARKER, WriteConflict),  # our THROW: an optimistic guard saw the planned-against rows change
    ('Transaction conflict', WriteConflict),  # the engine's own read/write conflict between concurrent transactions
    ('already contains', WriteConflict),  # a unique index clash: a concurrent writer took the same slot (a turn's seq)
    ('already exists', Conflict),  # a record id that is taken
)
WRITE_CONFLICT_DETAIL = 'a concurrent write changed the same memory; retry the request'


def engine_error(message: str) -> AgentMemoryError:
    """The error a failed statement's message stands for (``ENGINE_MESSAGES``)."""
    for marker, error in ENGINE_MESSAGES:
        if marker in message:
            # The engine's text can quote another row's indexed value: a conflict never passes it on.
            return error(WRITE_CONFLICT_DETAIL if error is WriteConflict else message)
    return QueryFailed(message)


@lru_cache(maxsize=1)
def get_database() -> Database:
    """The process-wide connection, opened lazily on first use and reused while warm."""
    settings = get_settings()
    s = settings
    return Database(s.db_url, s.db_namespace, s.db_user, s.db_password, s.db_timeout_seconds, s.db_user_level)


def context_db_name(context_id: str) -> str:
    # Context ids allow '-', database names in our USE prefix do not; '-' never collides with '_' ids
    # because the hex suffix keeps the mapping injective.
    return 'ctx_' + context_id.encode().hex()
