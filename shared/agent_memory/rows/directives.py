"""Instructions (CONTRACT §6.4) and uncertainties (§6.5) as read back."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agent_memory.rows.refs import EntityKey, entity_key_of
from agent_memory.rows.scopes import ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class InstructionRow:
    ref: str  # instruction:<id>
    label: str
    description: str
    scope_sets: ScopeSets
    created_at: dt.datetime
    merged_count: int = 0
    source_turn: str | None = None  # bare turn id of the first statement
    source_turns: tuple[str, ...] = ()  # every turn that stated it


@dataclass(frozen=True, slots=True, kw_only=True)
class UncertaintyRow:
    ref: str  # uncertainty:<id>
    about: str
    reason: str
    kind: str
    resolved: bool
    scope_sets: ScopeSets
    created_at: dt.datetime
    entity: str | None = None  # entity ref
    key: str | None = None
    source_turn: str | None = None  # bare turn id
    resolved_by: str | None = None  # bare turn id
    resolved_at: dt.datetime | None = None

    @property
    def entity_key(self) -> EntityKey | None:
        return entity_key_of(self.entity) if self.entity else None
