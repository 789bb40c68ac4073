"""Sessions, their turns and the chunks a turn is split into for retrieval."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from agent_memory.rows.scopes import ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionRow:
    key: str  # the stored key, ``<principal>/<client id>`` (legacy rows: the client id)
    session_id: str  # the id callers use
    principal: str
    scope_sets: ScopeSets
    created_at: dt.datetime
    metadata: dict[str, Any] = field(default_factory=dict)
    client_id: str | None = None
    closed_at: dt.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnRow:
    id: str  # bare turn id
    session_key: str  # the session's stored key
    seq: int
    role: str
    content: str
    observed_at: dt.datetime
    scope_sets: ScopeSets
    principal: str = ''
    speaker: str | None = None
    created_at: dt.datetime | None = None
    memory_category: str | None = None
    extraction_status: str | None = None
    extraction_error: str | None = None
    extraction_mode: str | None = None
    extraction_result: str | None = None
    llm_error: str | None = None
    read_region: list[str] | None = None
    origin: str | None = None  # None: ingested; 'chat': a /chat message; 'chat_reply': the reply /chat generated
    acting_principal: str | None = None  # the manager who wrote it on the principal's behalf


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkRow:
    ref: str  # memory_chunk:<id>
    turn: str  # bare turn id
    session_key: str
    position: int
    text: str
    scope_sets: ScopeSets
    created_at: dt.datetime
    role: str | None = None
    labels: list[str] = field(default_factory=list)
