"""Where a write goes: its session (found, or minted) and its scope, checked against the caller's write region.

Every write that stores turns (``/facts``, ``/facts/batch``, ``/chat``) starts here, before anything is planned: an
unknown or out-of-region session, a closed session and scopes outside the write region are refused (4xx) first.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from agent_memory.domain import sessions
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import normalise_scope_sets, within_region
from agent_memory.errors import Conflict, Forbidden
from agent_memory.rows.conversation import SessionRow
from agent_memory.rows.scopes import ScopeSets
from agent_memory.write_ops import CreateSession, WritePlan

NO_SESSION = 'session not found or outside your write region'


def write_region(caller: Caller, requested: Any, session: SessionRow | None) -> ScopeSets:
    scope_sets = normalise_scope_sets(requested)
    if scope_sets is None:
        scope_sets = session.scope_sets if session else caller.default_scopes
    if not within_region(scope_sets, caller.patterns('memory:write')):
        raise Forbidden('scopes are outside your write region')
    return scope_sets


def session_for_write(store: MemoryWrites, caller: Caller, session_id: str | None) -> SessionRow | None:
    if session_id is None:
        return None
    session = sessions.writable(store, caller, session_id)
    if session is None:  # absent and out-of-region sessions answer identically (no id probing)
        raise Forbidden(NO_SESSION)
    if session.closed_at is not None:
        raise Conflict('session is closed')
    return session


@dataclass(frozen=True)
class WriteTarget:
    session: SessionRow | None  # the existing session, None when this write mints one
    session_key: str  # the storage key turns are filed under
    session_id: str  # the id callers see
    scope_sets: ScopeSets
    now: dt.datetime
    new_session: CreateSession | None

    def plan(self) -> WritePlan:
        """An empty plan for this target: it creates the session first when the write minted it."""
        plan = WritePlan(now=self.now, session_id=self.session_key)
        if self.new_session is not None:
            plan.add(self.new_session)
        return plan


def write_target(store: MemoryWrites, caller: Caller, session_id: str | None, requested_scopes: Any, now: dt.datetime) -> WriteTarget:
    session = session_for_write(store, caller, session_id)
    scope_sets = write_region(caller, requested_scopes, session)
    session_key, client_id, created = sessions.target(caller, session, session_id, scope_sets, now)
    return WriteTarget(session, session_key, client_id, scope_sets, now, created)
