"""Response models: the documented shapes of what the API answers (camelCase on the wire).

The handlers build their bodies in the domain; these models describe them for the OpenAPI document, and the test
suite validates every response it receives against the document, so a body and its model cannot drift apart.
A model forbids undocumented fields; the few free-form parts (a context's config, an extraction's rows, a trace's
input) are plain JSON objects.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.alias_generators import to_camel

from agent_memory.rows.scopes import ScopeSets

Json = dict[str, Any]
Grants = dict[str, list[str]]


class Wire(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra='forbid', defer_build=True)


class Problem(Wire):
    """RFC 7807 problem details (application/problem+json); `message` repeats `detail`."""

    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None
    message: str


class Page(Wire):
    """Cursor pagination: walk until `hasMore` is false (visibility filters after the page bound)."""

    has_more: bool
    next_cursor: str | None


# ---- health --------------------------------------------------------------------------------------------
class Health(Wire):
    status: Literal['ok', 'unavailable']
    db: Literal['ok', 'unreachable']


# ---- memory rows -----------------------------------------------------------------------------------------
class Source(Wire):
    kind: str | None
    ref: str | None
    session_id: str | None
    principal: str | None


class EntityDetail(Wire):
    id: str
    name: str
    entity_type: str
    memory_category: str
    importance: float
    created_at: str | None
    updated_at: str | None


class AttributeDetail(Wire):
    id: str
    entity: str
    key: str
    value: Any
    memory_category: str
    importance: float
    confidence: float | None
    valid_from: str | None
    valid_until: str | None
    supersedes: str | None
    superseded_by: str | None
    source: Source | None
    created_at: str | None
    tentative: bool


class RelationDetail(Wire):
    id: str
    subject: str
    label: str
    object: str
    memory_category: str
    importance: float
    source: Source | None
    valid_from: str | None
    valid_until: str | None
    created_at: str | None


class ActionDetail(Wire):
    id: str
    actor: str
    verb: str
    object: str | None
    object_text: str | None
    summary: str
    occurred_at: str | None
    memory_category: str
    importance: float
    valid_from: str | None
    valid_until: str | None
    created_at: str | None


class InstructionDetail(Wire):
    id: str
    label: str
    description: str
    created_at: str | None
    merged_count: int


class UncertaintyDetail(Wire):
    id: str
    about: str
    reason: str
    kind: str
    resolved: bool
    resolved_by: str | None
    resolved_at: str | None
    source_turn: str | None
    entity: str | None
    key: str | None
    resolvable: bool
    created_at: str | None


# ---- writes ------------------------------------------------------------------------------------------------
class Extraction(BaseModel):
    """What an extraction (or an explicit write) changed: rows per kind; a finished job may add its own fields."""

    model_config = ConfigDict(extra='allow', defer_build=True)

    turn_id: str | None = Field(default=None, alias='turnId')
    entities: list[Json] = Field(default_factory=list)
    attributes: list[Json] = Field(default_factory=list)
    relations: list[Json] = Field(default_factory=list)
    actions: list[Json] = Field(default_factory=list)
    instructions: list[Json] = Field(default_factory=list)
    uncertainties: list[Json] = Field(default_factory=list)
    corrections: list[Json] = Field(default_factory=list)


class FactsResult(Wire):
    """`POST /facts`: 200 stored (`none`, `triples`, `preview`, or `full` finished within `Prefer: wait`), 202 queued."""

    mode: Literal['full', 'triples', 'preview', 'none']
    session_id: str | None
    turn_id: str | None
    chunk_id: str | None = None
    status: Literal['queued', 'done'] | None = None
    extraction: Extraction | None = None
    trace_id: str | None = None
    preview: bool | None = None


class FactsBatchResult(Wire):
    session_id: str | None
    turn_ids: list[str]
    status: Literal['queued', 'stored', 'done']
    extractions: list[Extraction] | None = None


class ExtractionStatus(Wire):
    turn_id: str
    status: str
    extraction: Extraction | None = None
    mode: str | None = None
    llm_error: str | None = None
    error: str | None = None


class SessionCreated(Wire):
    id: str
    scopes: ScopeSets
    metadata: Json
    created_at: str | None


class Turn(Wire):
    id: str
    session: str
    role: str
    content: str
    seq: int
    created_at: str | None
    observed_at: str | None
    extraction: str | None


class TurnPage(Wire):
    turns: list[Turn]
    page: Page


# ---- reads ---------------------------------------------------------------------------------------------------
class Hit(Wire):
    id: str
    score: float
    source: str
    text: str
    occurred_at: str | None
    resource: Json
    role: str | None = None


class QueryTrace(Wire):
    trace_id: str
    resolution_tier: str
    tier_reason: str
    latency_ms: float
    retrieved_count: int
    top_scores: list[float]


class QueryResult(Wire):
    tier: str
    hits: list[Hit]
    context_hits: list[Hit]
    seed_entities: list[str]
    query_ms: float
    trace: QueryTrace


class ContextBlock(Wire):
    context: str
    query_ms: float
    tier: str
    trace_id: str


class SessionContextBlock(Wire):
    """Without a query the block holds the session's recent turns only, and no retrieval trace is written."""

    context: str
    session_id: str
    trace_id: str | None = None


class Reflection(Wire):
    reflection: str
    evidence: list[str]
    persisted_attributes: list[Json]
    trace_id: str


class ForgetMatch(Wire):
    id: str
    text: str
    similarity: float


class ForgetResult(Wire):
    """`dryRun` lists what would go and deletes nothing; otherwise `purged` says whether rows were erased or closed."""

    deleted: int
    matched: list[ForgetMatch]
    dry_run: bool | None = None
    purged: bool | None = None


class Citation(Wire):
    marker: str
    id: str
    kind: str
    snippet: str
    score: float
    role: str | None


class MemoryUpdates(Wire):
    turn_id: str
    status: Literal['queued', 'stored']
    reply_stored: bool


class ChatReply(Wire):
    """With `stream: true` or `Accept: text/event-stream` the same answer comes as server-sent events: each frame's
    data is `{delta, traceId, sessionId}`, the last `{done: true, …this object}`."""

    reply: str
    session_id: str
    trace_id: str
    retrieval_trace_id: str
    cached: bool
    tier: Literal['cache', 'hybrid']
    citations: list[Citation]
    memory_updates: MemoryUpdates


class CategoryState(Wire):
    entities: list[EntityDetail]
    attributes: list[AttributeDetail]
    relations: list[RelationDetail]
    actions: list[ActionDetail]


class Unknown(Wire):
    about: str
    reason: str


class Truncated(Wire):
    entities: bool
    attributes: bool
    relations: bool
    actions: bool
    instructions: bool
    unknowns: bool


class State(Wire):
    """One section per memory category, then the instructions and open unknowns; `truncated` flags lists cut at `limit`."""

    identity: CategoryState
    knowledge: CategoryState
    context: CategoryState
    instructions: list[InstructionDetail]
    unknowns: list[Unknown]
    truncated: Truncated


class ProfileEntry(Wire):
    key: str
    value: Any
    entity: str
    entity_type: str
    importance: float
    valid_until: str | None
    tentative: bool


class Profile(Wire):
    self_facts: list[ProfileEntry]
    static: list[ProfileEntry]
    dynamic: list[ProfileEntry]
    preferences: list[ProfileEntry]
    instructions: list[InstructionDetail]


class UncertaintyPage(Wire):
    uncertainties: list[UncertaintyDetail]
    page: Page


class UncertaintyResolved(Wire):
    uncertainty: UncertaintyDetail
    attributes: list[Json]
    corrections: list[Json]


class ImportStarted(Wire):
    import_id: str
    context: str
    records: int


class ImportStaged(Wire):
    received: int
    staged: int


class ImportCommitted(Wire):
    """``done`` false: call commit again, it resumes (``written`` rows this time)."""

    context: str
    source_context: str
    done: bool
    written: int
    counts: dict[str, int] | None
    ms: int


class Me(Wire):
    context_id: str
    principal_id: str
    display_name: str
    kind: str
    grants: Grants
    token_grants: Grants | None
    effective_grants: Grants
    delegated_principal_id: str | None


class EntityView(Wire):
    entity: EntityDetail
    attributes: list[AttributeDetail]
    relations: list[RelationDetail]


class EntityPage(Wire):
    entities: list[EntityDetail]
    page: Page


class AttributeHistory(Wire):
    history: list[AttributeDetail]


# ---- traces ------------------------------------------------------------------------------------------------
class ResponseTrace(Wire):
    id: str
    user_message: str | None
    response_text: str | None
    redacted: bool = Field(
        description='true when the reader may not see every text of it now: the texts are null and '
        'the citations hold only the rows the reader may read'
    )
    cached: bool
    reused_from: str | None
    cache_eligible: bool
    citations: list[Json]
    model: str | None
    tokens: Any
    session_id: str | None
    latency_ms: float | None
    created_at: str | None


class Retrieval(Wire):
    id: str
    mode: str
    tier_entered: int
    tier_reason: str
    latency_ms: float
    retrieved_ids: list[str]
    scores: list[float]
    returned: list[Json]
    created_at: str | None


class TraceRecord(Wire):
    """A retrieval trace with the response it fed (`parent`, when one did)."""

    id: str
    query_text: str | None
    redacted: bool = Field(
        description="true when the reader's grants do not cover the region the trace was made under: "
        'queryText is null and only the rows the reader may read are listed'
    )
    endpoint: str | None
    resolution_tier: str
    tier_entered: int
    tier_reason: str
    cached: bool
    latency_ms: float
    created_at: str | None
    session_id: str | None
    source: str | None
    parent: ResponseTrace | None
    retrievals: list[Retrieval]


class TracePage(Wire):
    traces: list[TraceRecord]
    page: Page


class Reuse(Wire):
    id: str
    created_at: str | None
    latency_ms: float | None


class RetrievalTraceDetail(TraceRecord):
    kind: Literal['retrieval']
    reused_by: list[Reuse]


class ResponseTraceDetail(Wire):
    """A response written without a retrieval (a cache hit's own trace keeps its retrieval; this is the rest)."""

    id: str
    kind: Literal['response']
    parent: ResponseTrace | None
    retrievals: list[Retrieval]
    reused_by: list[Reuse]


class DecisionTraceDetail(Wire):
    id: str
    kind: Literal['decision']
    turn_id: str | None
    input: Any
    outcomes: Any
    redacted: bool
    latency_ms: float | None
    created_at: str | None


TraceDetail = Annotated[RetrievalTraceDetail | ResponseTraceDetail | DecisionTraceDetail, Field(discriminator='kind')]


class Trace(RootModel[TraceDetail]):
    """One trace by id, with its one-hop neighbourhood."""

    model_config = ConfigDict(defer_build=True)


class TraceStats(Wire):
    window_hours: int
    total_queries: int
    avg_latency_ms: float
    cache_hits: int
    response_traces_cached: int
    response_traces_total: int
    cache_hit_rate: float
    tier_counts: dict[str, int]
    endpoints: dict[str, int]


class InspectedEntity(EntityView):
    kind: Literal['entity']


class InspectedAttribute(Wire):
    kind: Literal['attribute']
    current: AttributeDetail | None
    history: list[AttributeDetail]


class InspectedTrace(BaseModel):
    """A trace ref: the trace as `GET /traces/{id}` shows it, its own kind in `traceKind`."""

    model_config = ConfigDict(extra='allow', defer_build=True)

    kind: Literal['trace']
    trace_kind: Literal['retrieval', 'response', 'decision'] = Field(alias='traceKind')
    id: str


Inspected = Annotated[InspectedEntity | InspectedAttribute | InspectedTrace, Field(discriminator='kind')]


class Inspection(RootModel[Inspected]):
    """The object a typed ref names: `entity:<type>/<name>`, `attribute:<type>/<name>/<key>` or `trace:<id>`."""

    model_config = ConfigDict(defer_build=True)


class SweepResult(Wire):
    affected: int
    ms: float


# ---- tenancy -------------------------------------------------------------------------------------------------
class ContextSummary(Wire):
    id: str
    created_at: str | None


class ContextView(Wire):
    id: str
    description: str | None
    config: Json
    created_at: str | None


class PrincipalView(Wire):
    id: str
    display_name: str
    kind: Literal['human', 'agent', 'service']
    grants: Grants
    default_scopes: ScopeSets
    external_id: str | None
    created_at: str | None


class KeyView(Wire):
    """A key as clients see it: never its hash; `secret` only in the answer to a mint or a rotation."""

    name: str
    principal_id: str
    grants: Grants | None
    expires_at: str | None
    created_at: str | None
    secret: str | None = None


class OwnKey(KeyView):
    current: bool


class OwnKeys(Wire):
    keys: list[OwnKey]
