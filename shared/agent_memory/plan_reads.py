"""What the reconciler reads besides facts: the open doubts and the active instructions at the addresses it plans on.

A leaf module (``db/`` builds these, ``domain/reconcile.py`` reads them). Ids are wire refs (``uncertainty:<id>``).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.rows.refs import EntityKey

ScopeSets = list[list[str]]


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
