"""What the write path reads besides facts: the open doubts and active instructions at the addresses the reconciler
plans on, and the reply an idempotent write already gave.

A leaf module (``db/`` builds these, the domain reads them). Ids are wire refs (``uncertainty:<id>``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agent_memory.rows.refs import EntityKey
from agent_memory.rows.scopes import ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class OpenUncertainty:
    ref: str  # uncertainty:<id>
    entity_key: EntityKey | None
    key: str | None
    scope_sets: ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class ActiveInstruction:
    ref: str  # instruction:<id>
    label: str
    description: str
    scope_sets: ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredReply:
    """What a write with an ``Idempotency-Key`` answered: replayed for the same body within the window."""

    body_hash: str
    status: int
    response_json: str  # JSON text: null fields survive (the SDK would drop None from an object)
    created_at: dt.datetime
    write_scope: list[list[str]] | None = None  # None: stored before migration 0030
    read_region: list[str] | None = None
