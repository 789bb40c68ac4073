"""The ports the domain depends on: ``Protocol``s that the repository's stores satisfy (``db/`` never sees these).

Rows cross as ``agent_memory.rows`` types with wire-string ids; the domain never receives a database dict or record id.
The composition root (``agent_memory.composition``) builds one set of stores per context and hands them out.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agent_memory.rows.control import ContextRow
from agent_memory.rows.directives import UncertaintyRow
from agent_memory.rows.memory import AttributeRow, EntityRow
from agent_memory.rows.refs import EntityKey
from agent_memory.rows.traces import RetrievalTraceRow, Reuse, TraceRow, TraceStats
from agent_memory.rows.views import EntityView, ProfileRows, StateRows

if TYPE_CHECKING:  # the write side and the turn and trace stores are typed by their classes until they get ports
    from agent_memory.db.memory_store import MemoryStore
    from agent_memory.db.trace_store import TraceStore
    from agent_memory.db.turn_store import TurnStore


class MemoryReads(Protocol):
    """Inspection reads, each filtered by the reader's ``memory:read`` patterns in the statement."""

    def list_entities(self, patterns: Sequence[str], entity_type: str | None, limit: int, after: EntityKey | None) -> list[EntityRow]: ...
    def get_entity(self, key: EntityKey, patterns: Sequence[str]) -> EntityRow | None: ...
    def attribute_history(self, key: EntityKey, attribute: str, patterns: Sequence[str]) -> list[AttributeRow]: ...
    def profile(
        self,
        self_key: EntityKey,
        categories: Sequence[str],
        patterns: Sequence[str],
        now: dt.datetime,
        limit: int,
        principals: Sequence[str] = (),
    ) -> ProfileRows: ...
    def entity_names(self, refs: Sequence[str]) -> dict[str, str]: ...
    def get_uncertainty(self, uncertainty_id: str) -> UncertaintyRow | None: ...
    def list_uncertainties(self, patterns: Sequence[str], resolved: bool | None, limit: int, after: str | None) -> list[UncertaintyRow]: ...
    def entity_view(self, key: EntityKey, patterns: Sequence[str], now: dt.datetime) -> EntityView: ...
    def state(self, categories: Sequence[str], patterns: Sequence[str], now: dt.datetime, limit: int) -> StateRows: ...


class EntityFactCloser(Protocol):
    def close_entity_facts(self, entity_key: list[str], now: dt.datetime, region: Sequence[str], read: Sequence[str]) -> int: ...


class TraceHistory(Protocol):
    """Traces read back; the filtering by principal is the caller's (``domain/trace_views.py``)."""

    def get(self, table: str, trace_id: str) -> TraceRow | None: ...
    def recent(self, principal: str | None, limit: int, before: dt.datetime | None) -> list[RetrievalTraceRow]: ...
    def reused_by(self, response_id: str, principal: str | None, limit: int = 20) -> list[Reuse]: ...
    def readable(self, refs: Sequence[str], patterns: Sequence[str]) -> set[str]: ...
    def stats(self, principal: str | None, since: dt.datetime) -> TraceStats: ...


class ContextDirectory(Protocol):
    """The contexts there are (the control store)."""

    def list_context_ids(self) -> list[str]: ...
    def get_context(self, context_id: str) -> ContextRow | None: ...


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
    def trace_history(self) -> TraceHistory: ...
    @property
    def lifecycle(self) -> Reinforcer: ...
