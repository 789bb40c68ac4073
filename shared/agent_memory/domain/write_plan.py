"""What one write will change, decided before the transaction that applies it.

The reconciler fills a plan from what it read; the store applies the whole plan in one
transaction and re-checks every address the plan relied on (``guards``), so a concurrent
writer makes the transaction fail and the reconciler re-plans instead of double-applying.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any


@dataclass
class AddressGuard:
    entity_key: list[str]
    key: str
    seen_ids: list[str]


@dataclass
class InstructionGuard:
    label_key: str
    description_key: str
    seen_ids: list[str]


@dataclass
class TurnOutcome:
    """Marks the turn's extraction done inside the same transaction (a second attempt then aborts)."""

    turn_id: str
    result_json: str
    mode: str  # stage0, or the structured-output mode of the LLM extraction
    llm_error: str | None = None  # the classified reason the LLM stage fell back to stage 0


@dataclass
class IdempotencyRecord:
    principal: str
    key: str
    body_hash: str
    status: int
    response: dict[str, Any]


@dataclass
class WritePlan:
    now: dt.datetime
    principal: str
    session_id: str | None
    new_session: dict[str, Any] | None = None
    turns: list[dict[str, Any]] = field(default_factory=list)  # in order; each includes 'id'
    chunks: list[dict[str, Any]] = field(default_factory=list)  # 'embedding' None and 'deferred' False: embedded at apply
    chunk_embeddings: list[tuple[str, str]] = field(default_factory=list)  # (chunk id, text) of a queued turn, embedded by the worker
    entities: list[dict[str, Any]] = field(default_factory=list)  # includes 'key' [type, name]
    guards: list[AddressGuard] = field(default_factory=list)
    new_attributes: list[dict[str, Any]] = field(default_factory=list)  # includes 'id', 'entity_key'
    superseded: list[tuple[str, str]] = field(default_factory=list)  # (old id, new id)
    closed_attributes: list[str] = field(default_factory=list)
    refreshed_attributes: list[tuple[str, float]] = field(default_factory=list)  # (id, confidence)
    new_relations: list[dict[str, Any]] = field(default_factory=list)
    refreshed_relations: list[str] = field(default_factory=list)
    closed_relations: list[str] = field(default_factory=list)
    new_actions: list[dict[str, Any]] = field(default_factory=list)  # includes 'id', 'actor_key', 'object_key'
    new_instructions: list[dict[str, Any]] = field(default_factory=list)  # includes 'id'
    merged_instructions: list[tuple[str, Any]] = field(default_factory=list)  # (id, source turn record or None)
    instruction_guards: list[InstructionGuard] = field(default_factory=list)
    uncertainties: list[dict[str, Any]] = field(default_factory=list)
    resolved_uncertainties: list[str] = field(default_factory=list)
    turn_outcome: TurnOutcome | None = None
    decision_trace: dict[str, Any] | None = None
    retrieval_trace: dict[str, Any] | None = None  # /chat: written with the turns it stored
    response_trace: dict[str, Any] | None = None
    reinforced: list[tuple[str, Any]] = field(default_factory=list)  # (table, id) of the facts a /chat reply cited
    idempotency: IdempotencyRecord | None = None
