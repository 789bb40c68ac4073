"""Session ids (CONTRACT §3): a caller's session id never reveals or blocks anyone else's.

A session is stored under ``<principal>/<session id>`` (the principal that created it; ``/`` never occurs in either
part), with the caller's id in ``client_id``. A caller naming session ``X`` gets, in order: its own ``X``, then the
oldest session called ``X`` (or a legacy one stored under the bare id) that lies in the region the operation needs —
readable for reads, inside the write region for writes. So another principal's ``X`` outside that region is
indistinguishable from no session at all, and creating ``X`` while someone else's invisible ``X`` exists simply
creates the caller's own: no 409 oracle, no squatting. A session the caller can already read (a shared one) is
reused rather than shadowed, and creating it again is the usual 409.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory.clock import new_id
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import visible, within_region
from agent_memory.rows.conversation import SessionRow
from agent_memory.rows.scopes import ScopeSets
from agent_memory.write_ops import CreateSession

Region = Callable[[Sequence[Sequence[str]], Sequence[str]], bool]


def storage_key(principal_id: str, session_id: str) -> str:
    return f'{principal_id}/{session_id}'


def key_of(session: SessionRow) -> str:
    return session.key


def _find(store: MemoryWrites, caller: Caller, session_id: str, patterns: Sequence[str], inside: Region) -> SessionRow | None:
    prefetched = caller.sessions_named
    if prefetched is not None and prefetched[0] == session_id:
        candidates: Sequence[SessionRow] = prefetched[1]  # read in the authentication round trip
    else:
        candidates = store.sessions_named(storage_key(caller.principal_id, session_id), session_id)
    return next((s for s in candidates if inside(s.scope_sets, patterns)), None)


def readable(store: MemoryWrites, caller: Caller, session_id: str) -> SessionRow | None:
    return _find(store, caller, session_id, caller.patterns('memory:read'), visible)


def readable_key(store: MemoryWrites, caller: Caller, session_id: str | None) -> str | None:
    """The storage key a read filter by ``session_id`` uses; an unreadable id filters to the caller's own namespace
    (which then matches nothing the caller could not see anyway)."""
    if session_id is None:
        return None
    found = readable(store, caller, session_id)
    return key_of(found) if found is not None else storage_key(caller.principal_id, session_id)


def writable(store: MemoryWrites, caller: Caller, session_id: str) -> SessionRow | None:
    return _find(store, caller, session_id, caller.patterns('memory:write'), within_region)


def new_session(caller: Caller, session_id: str, scope_sets: ScopeSets, now: dt.datetime,
                metadata: dict[str, Any] | None = None) -> CreateSession:  # fmt: skip
    key = storage_key(caller.principal_id, session_id)
    return CreateSession(key, session_id, caller.principal_id, scope_sets, metadata or {}, now)


def target(caller: Caller, session: SessionRow | None, session_id: str | None, scope_sets: ScopeSets,
           now: dt.datetime) -> tuple[str, str, CreateSession | None]:  # fmt: skip
    """A write's session: (storage key, the id callers see, the session to create when it is new)."""
    if session is not None and session_id is not None:
        return key_of(session), session_id, None
    minted = f'sess_{new_id()}'
    fresh = new_session(caller, minted, scope_sets, now)
    return fresh.key, minted, fresh
