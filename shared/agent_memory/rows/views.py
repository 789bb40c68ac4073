"""Views made of several reads: an entity with its facts, and the state of memory by category."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_memory.rows.directives import InstructionRow, UncertaintyRow
from agent_memory.rows.memory import ActionRow, AttributeRow, EntityRow, RelationRow


@dataclass(frozen=True)
class EntityView:
    entity: EntityRow | None  # None when absent or invisible
    attributes: list[AttributeRow]  # current, by key
    relations: list[RelationRow]  # current, both ways, oldest first


@dataclass(frozen=True)
class ProfileRows:
    """The caller's self facts, the newest current visible attributes per memory category, the active instructions."""

    self_attributes: list[AttributeRow]
    attributes: dict[str, list[AttributeRow]]
    instructions: list[InstructionRow]
    self_name: str | None = None  # the self entity's shown name (None: it holds no fact yet)
    principal_names: dict[str, str] = field(default_factory=dict)  # principal id -> display name, for those asked


@dataclass(frozen=True)
class StateRows:
    """Per memory category, the newest current visible rows of each kind; active instructions; open uncertainties."""

    entities: dict[str, list[EntityRow]]
    attributes: dict[str, list[AttributeRow]]
    relations: dict[str, list[RelationRow]]
    actions: dict[str, list[ActionRow]]
    instructions: list[InstructionRow]
    unknowns: list[UncertaintyRow]
