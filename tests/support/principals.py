"""Principals with chosen grants and default scope, each with a key, written straight into a context."""

from __future__ import annotations

from typing import Any

from agent_memory.clock import utcnow
from agent_memory.db.control_store import KeyRecord
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.auth import hash_key, mint_token
from tests.support.handlers import Api


def make_principal(services: Any, context_id: str, pid: str, grants: dict[str, list[str]], default: str,
                   key_grants: dict[str, list[str]] | None = None) -> Api:  # fmt: skip
    """Principal ``pid`` (display name ``pid.title()``), and an Api holding a key of it (narrowed by ``key_grants``)."""
    store: MemoryStore = services.store(context_id)
    store.q('CREATE type::record("principal", $id) CONTENT $row;', id=pid, row={
        'display_name': pid.title(), 'kind': 'human', 'grants': grants, 'default_scopes': [[default]], 'created_at': utcnow()})  # fmt: skip
    token = mint_token()
    services.control.put_key(KeyRecord(context_id, pid, 'k', hash_key(token), key_grants, None), utcnow())
    return Api(context_id, token)
