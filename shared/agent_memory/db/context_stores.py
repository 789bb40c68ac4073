"""One context's stores, built together once per context per process (``composition.Services.context``)."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.db.inspection_reads import InspectionReads
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.reinforcement import ImportanceRule
from agent_memory.db.trace_reads import TraceReads
from agent_memory.db.trace_store import TraceStore
from agent_memory.db.turn_store import TurnStore


@dataclass(frozen=True)
class ContextStores:
    memory: MemoryStore  # the write transaction and the reads that plan it
    reads: InspectionReads
    turns: TurnStore
    traces: TraceStore  # writes, and the response cache's lookups
    trace_history: TraceReads
    lifecycle: LifecycleStore

    @classmethod
    def over(cls, memory: MemoryStore, importance: ImportanceRule) -> ContextStores:
        return cls(
            memory=memory,
            reads=InspectionReads(memory),
            turns=TurnStore(memory),
            traces=TraceStore(memory),
            trace_history=TraceReads(memory),
            lifecycle=LifecycleStore(memory.db, memory.database, importance),
        )
