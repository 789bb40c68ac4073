"""The last step of every write: embed what the plan creates, then apply the plan in one transaction."""

from __future__ import annotations

from agent_memory.domain.plan_embeddings import embed_plan
from agent_memory.domain.ports import MemoryWrites
from agent_memory.embeddings import Embedder
from agent_memory.write_ops import WritePlan


def commit(store: MemoryWrites, embedder: Embedder, plan: WritePlan) -> None:
    """Raises WriteConflict when an address the plan relied on changed meanwhile (the caller re-plans)."""
    embed_plan(plan, embedder)
    store.apply(plan)
