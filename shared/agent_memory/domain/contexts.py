"""Contexts (tenants): create, read, reconfigure and delete them; bootstrap their first keys (CONTRACT §3, §10, §13)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent_memory.clock import utcnow, when
from agent_memory.domain.auth import check_context_id, hash_key, mint_token
from agent_memory.domain.context_config import deep_merge, effective_config
from agent_memory.domain.ports import Control, MemoryWrites
from agent_memory.errors import BadRequest, NotFound, run_with_retry
from agent_memory.rows.control import ContextRow, KeyRecord

StoreFor = Callable[[str], MemoryWrites]  # a context's memory store, migrated


def context_view(row: ContextRow) -> dict[str, Any]:
    """A context with its **effective** config (defaults merged under the stored override)."""
    return {
        'id': row.id,
        'description': row.description,
        'config': effective_config(row.config).model_dump(),
        'createdAt': when(row.created_at),
    }


def create_context(control: Control, store_for: StoreFor, context_id: str, config: dict[str, Any], *, description: str | None = None,
                   admin_display_name: str | None = None, admin_external_id: str | None = None) -> dict[str, Any]:  # fmt: skip
    """Provision a context: its control record, its own database (migrated) and reserved principals (the admin one
    with the given display name and external id)."""
    check_context_id(context_id)
    effective_config(config)  # validates before anything is written
    now = utcnow()
    row = control.create_context(context_id, config, now, description)
    store_for(context_id).ensure_reserved_principals(now, admin_display_name or 'Admin', admin_external_id)
    return context_view(row)


def list_contexts(control: Control) -> list[dict[str, Any]]:
    return [{'id': r.id, 'createdAt': when(r.created_at)} for r in control.list_contexts()]


def existing_context(control: Control, context_id: str) -> ContextRow:
    """The control record of a context (422 for a bad id, 404 when it does not exist)."""
    check_context_id(context_id)
    row = control.get_context(context_id)
    if row is None:
        raise NotFound('context not found')
    return row


def get_context(control: Control, context_id: str) -> dict[str, Any]:
    return context_view(existing_context(control, context_id))


def patch_context(control: Control, context_id: str, patch: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge ``patch`` into the stored override; the result must validate (400 changes nothing)."""
    if not isinstance(patch, dict):
        raise BadRequest('config must be an object')

    def attempt() -> dict[str, Any]:
        row = existing_context(control, context_id)
        merged = deep_merge(row.config, patch)
        effective_config(merged)
        control.update_context_config(context_id, row.updated_at, merged, utcnow())
        return context_view(replace(row, config=merged))

    result: dict[str, Any] = run_with_retry(attempt)
    return result


def delete_context(control: Control, context_id: str) -> None:
    """Drop the context's database, its keys and its control record (irreversible)."""
    check_context_id(context_id)
    if not control.delete_context(context_id):
        raise NotFound('context not found')


def mint_context_key(control: Control, context_id: str, principal: str, name: str, token: str | None = None) -> str:
    """Register a key for ``principal`` (replacing one of the same name); return the plaintext (shown once, never stored)."""
    secret = token or mint_token()
    control.put_key(KeyRecord(context_id, principal, name, hash_key(secret), None, None), utcnow())
    return secret


def bootstrap(control: Control, store_for: StoreFor, context_id: str, context_key: str | None) -> str:
    """Idempotent local/first-deploy bootstrap: the context and one admin key for it (management keys come from
    the configuration, registered at cold start)."""
    if control.get_context(context_id) is None:
        create_context(control, store_for, context_id, {})
    else:
        store_for(context_id).ensure_reserved_principals(utcnow())
    return mint_context_key(control, context_id, 'admin', 'bootstrap', context_key)
