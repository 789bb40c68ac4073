"""The principal store a management or self-service request works on, so no handler picks a context's principals.

The stores are built by the composition root (``composition.Services.principals``) and passed in.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.domain.auth import Caller
from agent_memory.domain.contexts import existing_context
from agent_memory.domain.ports import Control, Principals

PrincipalsFor = Callable[[str], Principals]  # a context's principals, by context id


def of_existing_context(control: Control, principals_for: PrincipalsFor, context_id: str) -> Principals:
    """Management routes: the principals of a context that exists (422 bad id, 404 unknown)."""
    existing_context(control, context_id)
    return principals_for(context_id)


def of_caller(principals_for: PrincipalsFor, caller: Caller) -> Principals:
    """Self-service routes: the principals of the context the caller's key belongs to."""
    return principals_for(caller.context_id)
