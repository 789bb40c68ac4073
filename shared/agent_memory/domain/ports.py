"""The ports the domain depends on: ``Protocol``s that the repository's stores satisfy (``db/`` never sees these).

Rows cross as ``agent_memory.rows`` types with wire-string ids; the domain never receives a database dict or record id.
The composition root (``agent_memory.composition``) builds one set of stores per context and hands them out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agent_memory.rows.directives import InstructionRow, UncertaintyRow
from agent_memory.rows.memory import AttributeRow, EntityRow
from agent_memory.rows.refs import EntityKey
from agent_memory.rows.views import EntityView, StateRows

if TYPE_CHECKING:  # the write side and the turn and trace stores are typed by their classes until they get ports
    from agent_memory.db.memory_store import MemoryStore
    from agent_memory.db.trace_store import TraceStore
    from agent_memory.db.turn_store import TurnStore


class MemoryReads(Protocol):
    """Inspection reads, each filtered by the reader's ``memory:read`` patterns in the statement."""

    def list_entities(self, patterns: Sequence[str], entity_type: str | None, limit: int, after: EntityKey | None) -> list[EntityRow]: ...
    def get_entity(self, key: EntityKey, patterns: Sequence[str]) -> EntityRow | None: ...
    def attribute_history(self, key: EntityKey, attribute: str, patterns: Sequence[str]) -> list[AttributeRow]: ...
    def current_attributes(self, category: str, patterns: Sequence[str], now: dt.datetime, limit: int) -> list[AttributeRow]: ...
    def self_attributes(self, self_key: EntityKey, patterns: Sequence[str], now: dt.datetime, limit: int) -> list[AttributeRow]: ...
    def entity_names(self, refs: Sequence[str]) -> dict[str, str]: ...
    def list_instructions(self, patterns: Sequence[str], limit: int) -> list[InstructionRow]: ...
    def get_uncertainty(self, uncertainty_id: str) -> UncertaintyRow | None: ...
    def list_uncertainties(self, patterns: Sequence[str], resolved: bool | None, limit: int, after: str | None) -> list[UncertaintyRow]: ...
    def entity_view(self, key: EntityKey, patterns: Sequence[str], now: dt.datetime) -> EntityView: ...
    def state(self, categories: Sequence[str], patterns: Sequence[str], now: dt.datetime, limit: int) -> StateRows: ...


class EntityFactCloser(Protocol):
    def close_entity_facts(self, entity_key: list[str], now: dt.datetime, region: Sequence[str], read: Sequence[str]) -> int: ...


class Reinforcer(Protocol):
    def reinforce(self, refs: Iterable[tuple[str, Any]]) -> int: ...


class ContextPorts(Protocol):
    """What a request against one context is handed (``api.http.data_plane``)."""

    @property
    def memory(self) -> MemoryStore: ...
    @property
    def reads(self) -> MemoryReads: ...
    @property
    def turns(self) -> TurnStore: ...
    @property
    def traces(self) -> TraceStore: ...
    @property
    def lifecycle(self) -> Reinforcer: ...
