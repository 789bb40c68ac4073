"""Contexts (tenants) and principals as read back."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from agent_memory.rows.conversation import SessionRow


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextRow:
    id: str
    created_at: dt.datetime
    updated_at: dt.datetime
    config: dict[str, Any] = field(default_factory=dict)  # the stored override (defaults are merged on read)
    description: str | None = None


@dataclass(frozen=True)
class KeyRecord:
    """An API key as stored: only the hash of its secret."""

    context: str
    principal: str
    name: str
    hash: str
    grants: dict[str, list[str]] | None  # an attenuation of the principal's grants, None for all of them
    expires_at: dt.datetime | None
    created_at: dt.datetime | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PrincipalRow:
    id: str  # bare principal id
    display_name: str
    kind: str
    grants: dict[str, list[str]] = field(default_factory=dict)
    default_scopes: list[list[str]] | None = None
    external_id: str | None = None
    created_at: dt.datetime | None = None
    updated_at: dt.datetime | None = None


@dataclass(frozen=True)
class RateDefaults:
    enabled: bool
    requests_per_minute: int
    burst: int


@dataclass(frozen=True)
class CallerRows:
    key: KeyRecord | None
    context: ContextRow | None
    principal: PrincipalRow | None  # None unless the key is valid for this context
    target: PrincipalRow | None  # the delegation target, None when absent or unknown
    sessions: list[SessionRow] | None  # the sessions named ``session`` (see SESSIONS_NAMED), None when not asked
    wait: float  # 0 when a token was taken (or throttling is off), else seconds until one is available
