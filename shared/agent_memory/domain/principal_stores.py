"""The principal store a management or self-service request works on, so no handler builds a repository."""

from __future__ import annotations

from agent_memory.db.connection import Database
from agent_memory.db.control_store import ControlStore
from agent_memory.db.principal_store import PrincipalStore
from agent_memory.domain.auth import Caller
from agent_memory.domain.contexts import existing_context


def of_existing_context(db: Database, control: ControlStore, context_id: str) -> PrincipalStore:
    """Management routes: the principals of a context that exists (422 bad id, 404 unknown)."""
    existing_context(control, context_id)
    return PrincipalStore(db, context_id)


def of_caller(db: Database, caller: Caller) -> PrincipalStore:
    """Self-service routes: the principals of the context the caller's key belongs to."""
    return PrincipalStore(db, caller.context_id)
