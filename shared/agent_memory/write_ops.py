"""What one write will change, decided before the transaction that applies it: a ``WritePlan`` of typed operations.

The domain fills a plan from what it read (``domain/reconcile.py``); ``db/write_emitters.py`` turns each operation
kind into SurrealQL, and the store applies the whole plan in one transaction that re-checks every address the plan
relied on (the guard operations), so a concurrent writer makes the transaction fail and the caller re-plans instead
of double-applying.

A leaf module (it imports neither ``domain/`` nor ``db/``). Ids are wire strings: a record's key without its table;
an entity is addressed by its key ``(type, normalised name)``. ``embedding`` fields are filled by the domain
(``domain/plan_embeddings.py``) before the commit; the repository holds no embedder.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agent_memory.rows.scopes import ScopeSets

EntityKey = tuple[str, str]
Vector = list[float]


@dataclass(frozen=True)
class Provenance:
    """Where a fact came from (stored as the row's ``source``)."""

    kind: str  # 'upsert' (caller-supplied), 'document', or 'turn' (extracted)
    ref: str | None
    session_id: str | None
    principal: str
    acting_principal: str | None = None  # the manager who wrote it on the principal's behalf (delegation audit)


@dataclass(frozen=True)
class FactFields:
    """Provenance, category, initial importance, times and scope shared by every new fact row."""

    memory_category: str
    importance: float  # the initial value: stored as the decay base
    source: Provenance
    source_turn: str | None
    valid_from: dt.datetime
    created_at: dt.datetime
    confirmed_at: dt.datetime | None
    scope_sets: ScopeSets


# ---- guards and bookkeeping ------------------------------------------------------------------------------


@dataclass(frozen=True)
class MarkTurnExtracted:
    """Marks the turn's extraction done in the same transaction (a second attempt then aborts)."""

    turn_id: str
    result_json: str
    mode: str  # stage0, or the structured-output mode of the LLM extraction
    llm_error: str | None = None  # the classified reason the LLM stage fell back to stage 0


@dataclass(frozen=True)
class SaveIdempotency:
    principal: str
    key: str
    body_hash: str
    status: int
    response: Mapping[str, Any]
    created_at: dt.datetime
    write_scope: ScopeSets | None = None  # where the write went: a replay needs the grant to write there
    read_region: Sequence[str] | None = None  # the writer's memory:read: a replay needs a grant that covers it


@dataclass(frozen=True)
class GuardAddress:
    """Abort (a retryable conflict) unless the open attributes at (entity, key) are exactly ``seen_ids``."""

    entity_key: EntityKey
    key: str
    seen_ids: tuple[str, ...]


@dataclass(frozen=True)
class GuardInstructions:
    """Abort unless the active instructions with this label and description are exactly ``seen_ids``."""

    label_key: str
    description_key: str
    seen_ids: tuple[str, ...]


# ---- conversation ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CreateSession:
    key: str  # ``<principal>/<client id>``
    client_id: str
    principal: str
    scope_sets: ScopeSets
    metadata: Mapping[str, Any]
    created_at: dt.datetime


@dataclass(frozen=True)
class CreateTurn:
    """A turn; its ``seq`` is the session's max + 1, read inside the transaction."""

    id: str
    session_key: str
    role: str
    content: str
    principal: str
    scope_sets: ScopeSets
    read_region: list[str]  # bounds what extraction may send to an LLM with this turn
    created_at: dt.datetime
    observed_at: dt.datetime
    extraction_status: str | None
    memory_category: str | None
    speaker: str | None
    enqueued_at: dt.datetime | None
    origin: str | None = None  # None: ingested (evidence); 'chat': a /chat message; 'chat_reply': a generated reply
    acting_principal: str | None = None  # the manager who wrote it on the principal's behalf (delegation audit)


@dataclass(frozen=True)
class CreateChunk:
    id: str
    session_key: str
    turn_id: str
    position: int
    text: str
    scope_sets: ScopeSets
    labels: list[str]
    role: str
    created_at: dt.datetime
    deferred: bool  # the turn is queued: the worker embeds it (``EmbedChunk``), not this request
    embedding: Vector | None = None


@dataclass(frozen=True)
class EmbedChunk:
    """The worker's vector for a chunk its request stored unembedded."""

    chunk_id: str
    text: str
    embedding: Vector | None = None


# ---- facts -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UpsertEntity:
    key: EntityKey
    name: str
    memory_category: str
    importance: float
    scope_sets: ScopeSets
    self_principal: str | None
    created_at: dt.datetime
    updated_at: dt.datetime
    embedding: Vector | None = None
    rename: bool = False  # a self entity takes the name its person gave ("I'm Sam"): replaces the stored name and vector


@dataclass(frozen=True)
class CreateAttribute:
    id: str
    entity_key: EntityKey
    key: str
    value: str
    confidence: float
    fields: FactFields
    valid_until: dt.datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None  # set when a later value in the same write replaces it: born closed
    embedding: Vector | None = None


@dataclass(frozen=True)
class SupersedeAttribute:
    old_id: str
    new_id: str


@dataclass(frozen=True)
class CloseAttribute:
    id: str


@dataclass(frozen=True)
class RefreshAttribute:
    id: str
    confidence: float


@dataclass(frozen=True)
class CreateRelation:
    id: str
    from_key: EntityKey
    to_key: EntityKey
    label: str
    fields: FactFields


@dataclass(frozen=True)
class RefreshRelation:
    id: str


@dataclass(frozen=True)
class CloseRelation:
    id: str


@dataclass(frozen=True)
class CreateAction:
    id: str
    actor_key: EntityKey
    object_key: EntityKey | None
    verb: str
    object_text: str | None
    summary: str | None
    occurred_at: dt.datetime | None
    fields: FactFields


@dataclass(frozen=True)
class CreateInstruction:
    id: str
    label: str
    description: str
    label_key: str
    description_key: str
    source_turn: str | None
    scope_sets: ScopeSets
    created_at: dt.datetime


@dataclass(frozen=True)
class MergeInstruction:
    id: str
    source_turn: str | None


@dataclass(frozen=True)
class CreateUncertainty:
    id: str
    about: str
    reason: str
    kind: str
    entity_key: EntityKey | None
    key: str | None
    source_turn: str | None
    scope_sets: ScopeSets
    created_at: dt.datetime


@dataclass(frozen=True)
class ResolveUncertainty:
    id: str
    resolved_by_turn: str | None


# ---- traces and reinforcement ----------------------------------------------------------------------------


@dataclass(frozen=True)
class DecisionTrace:
    id: str
    input: Mapping[str, Any]
    outcomes: Sequence[Mapping[str, str]]
    principal: str
    turn_id: str | None
    latency_ms: float
    created_at: dt.datetime
    scope_sets: ScopeSets | None = None  # where the write went: a reader sees the trace's texts only if it can read there
    acting_principal: str | None = None


@dataclass(frozen=True)
class ResponseTrace:
    """What a synthesised answer (/chat, /reflect) was, how it was made and what it cited (CONTRACT §8)."""

    id: str
    endpoint: str
    message: str
    reply: str
    model: str | None
    tokens: Mapping[str, Any] | None
    latency_ms: float
    cached: bool
    cache_eligible: bool
    cited: Sequence[Mapping[str, Any]]
    visibility_fingerprint: str
    principal: str
    created_at: dt.datetime
    read_sources: Sequence[Mapping[str, str]] | None = None
    cited_entity_refs: Sequence[str] | None = None
    reused_from: str | None = None  # the response trace a cache hit reused
    session_key: str | None = None
    read_region: Sequence[str] | None = None  # the reader's memory:read patterns: who may later see its texts
    acting_principal: str | None = None


@dataclass(frozen=True)
class TraceCandidate:
    """One row of a retrieval's pool: its fused score and its rank in each list it came from."""

    id: str
    table: str
    score: float
    lists: Mapping[str, int]


@dataclass(frozen=True)
class TraceReturned:
    """One row a read returned, at its rank."""

    id: str
    table: str
    rank: int
    score: float
    occurred_at: dt.datetime | None


@dataclass(frozen=True)
class RetrievalTrace:
    """What a read asked, what it found and what it returned, for whom (``recall.trace_row`` builds it)."""

    id: str
    query: str
    query_embedding: Sequence[float] | None  # only an answer that may be served again stores its question's vector
    mode: str
    tier_entered: int
    tier_reason: str
    candidates: Sequence[TraceCandidate]
    returned: Sequence[TraceReturned]
    latency_ms: float
    visibility_fingerprint: str
    session: str | None  # the stored session key
    principal: str
    acting_principal: str | None
    read_region: Sequence[str]  # who may see its texts later
    endpoint: str
    source: str | None
    created_at: dt.datetime
    cache_eligible: bool | None = None  # set by /chat only
    question_key: str | None = None  # set by /chat only


@dataclass(frozen=True)
class WriteTraces:
    """A retrieval trace and the response trace answered from it."""

    retrieval: RetrievalTrace
    response: ResponseTrace | None = None


@dataclass(frozen=True)
class Reinforce:
    """×1.1 (cap 2.0) on the facts a reply cited: ``(table, key)`` pairs; tables that do not decay are skipped."""

    refs: Sequence[tuple[str, Any]]


Operation = (
    MarkTurnExtracted
    | SaveIdempotency
    | GuardAddress
    | GuardInstructions
    | CreateSession
    | CreateTurn
    | CreateChunk
    | EmbedChunk
    | UpsertEntity
    | CreateAttribute
    | SupersedeAttribute
    | CloseAttribute
    | RefreshAttribute
    | CreateRelation
    | RefreshRelation
    | CloseRelation
    | CreateAction
    | CreateInstruction
    | MergeInstruction
    | CreateUncertainty
    | ResolveUncertainty
    | DecisionTrace
    | WriteTraces
    | Reinforce
)


Op = TypeVar('Op', bound=Operation)


@dataclass
class WritePlan:
    now: dt.datetime
    session_id: str | None  # the session's storage key, when the write stores turns
    operations: list[Operation] = field(default_factory=list)

    def add(self, *operations: Operation) -> None:
        self.operations.extend(operations)

    def of(self, kind: type[Op]) -> Iterator[Op]:
        """The planned operations of one kind, in plan order."""
        return (op for op in self.operations if isinstance(op, kind))

    def swap(self, old: Operation, new: Operation) -> None:
        """Replace a planned operation (operations are immutable) keeping its place."""
        self.operations[next(i for i, op in enumerate(self.operations) if op is old)] = new
