"""One context's stores, kept once per context per process (``composition.Services.context``).

Each store is built, and its module imported, on first use: a route pays at its cold start only for the stores it
touches (the self-service keys route touches none). The stores hold no state of their own (the schema check is
``ensure_migrated``'s, locked and once per database), so two threads racing on a first use build two equal objects
and one is kept: no lock is needed.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from agent_memory.db.connection import Database
from agent_memory.db.reinforcement import ImportanceRule

if TYPE_CHECKING:
    from agent_memory.db.backup_store import BackupStore
    from agent_memory.db.inspection_reads import InspectionReads
    from agent_memory.db.lifecycle_store import LifecycleStore
    from agent_memory.db.memory_store import MemoryStore
    from agent_memory.db.trace_reads import TraceReads
    from agent_memory.db.trace_store import TraceStore
    from agent_memory.db.turn_store import TurnStore


class ContextStores:
    def __init__(self, db: Database, context_id: str, importance: ImportanceRule) -> None:
        self._db = db
        self._context_id = context_id
        self._importance = importance

    @cached_property
    def memory(self) -> MemoryStore:
        """The write transaction and the reads that plan it (its schema migrated on first use)."""
        from agent_memory.db.memory_store import MemoryStore

        return MemoryStore(self._db, self._context_id, self._importance)

    @cached_property
    def reads(self) -> InspectionReads:
        from agent_memory.db.inspection_reads import InspectionReads

        return InspectionReads(self.memory)

    @cached_property
    def turns(self) -> TurnStore:
        from agent_memory.db.turn_store import TurnStore

        return TurnStore(self.memory)

    @cached_property
    def traces(self) -> TraceStore:
        """Writes, and the response cache's lookups."""
        from agent_memory.db.trace_store import TraceStore

        return TraceStore(self.memory)

    @cached_property
    def trace_history(self) -> TraceReads:
        from agent_memory.db.trace_reads import TraceReads

        return TraceReads(self.memory)

    @cached_property
    def backup(self) -> BackupStore:
        """Export pages, and an import's staging and commit (docs/backup-format.md)."""
        from agent_memory.db.backup_store import BackupStore

        return BackupStore(self.memory.db, self.memory.database)

    @cached_property
    def lifecycle(self) -> LifecycleStore:
        from agent_memory.db.lifecycle_store import LifecycleStore

        return LifecycleStore(self.memory.db, self.memory.database, self._importance)
