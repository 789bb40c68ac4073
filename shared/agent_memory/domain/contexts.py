"""Creating contexts and bootstrapping their first keys (full tenancy management is a later issue)."""

from __future__ import annotations

from typing import Any

from agent_memory.db.control_store import ControlStore, KeyRecord
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.auth import check_context_id, hash_key, mint_token
from agent_memory.domain.context_config import effective_config
from agent_memory.domain.ids import utcnow


def create_context(control: ControlStore, store_for: Any, context_id: str, config: dict[str, Any]) -> dict[str, Any]:
    """Provision a context: its control record, its own database (migrated) and reserved principals."""
    check_context_id(context_id)
    effective = effective_config(config)  # validates before anything is written
    now = utcnow()
    row = control.create_context(context_id, config, now)
    store: MemoryStore = store_for(context_id)
    store.ensure_reserved_principals(now)
    return {'id': context_id, 'config': effective.model_dump(), 'createdAt': row['created_at'].isoformat()}


def mint_context_key(control: ControlStore, context_id: str, principal: str, name: str, token: str | None = None) -> str:
    """Register a key for ``principal``; return the plaintext (shown once, never stored)."""
    secret = token or mint_token()
    control.put_key(KeyRecord(context_id, principal, name, hash_key(secret), None, None), utcnow())
    return secret


def register_management_key(control: ControlStore, token: str | None = None) -> str:
    secret = token or mint_token('amm')
    control.put_management_key(hash_key(secret), utcnow())
    return secret


def bootstrap(
    control: ControlStore, store_for: Any, context_id: str, management_key: str | None, context_key: str | None
) -> tuple[str, str]:
    """Idempotent local/first-deploy bootstrap: management key, the context, and one admin key for it."""
    management = register_management_key(control, management_key)
    if control.get_context(context_id) is None:
        create_context(control, store_for, context_id, {})
    else:
        store_for(context_id).ensure_reserved_principals(utcnow())
    key = mint_context_key(control, context_id, 'admin', 'bootstrap', context_key)
    return management, key
