"""Response models: the documented shapes of what the API answers (camelCase on the wire).

The handlers build their bodies in the domain; these models describe them for the OpenAPI document, and the test
suite validates every response it receives against the document, so a body and its model cannot drift apart.
A model forbids undocumented fields; the few free-form parts (a context's config, an extraction's rows, a trace's
input) are plain JSON objects.

Every field is described by the docstring under it (``use_attribute_docstrings``); a meaning several models share is
an annotated type below, described once. The handlers never build these models, so reading the docstrings costs no
cold start.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel
from pydantic.alias_generators import to_camel

from agent_memory.rows.scopes import ScopeSets

Json = dict[str, Any]
Grants = dict[str, list[str]]

Category = Annotated[
    str,
    Field(
        description='Memory category: `identity` (who someone is; importance 1.0, no decay, no expiry), `knowledge` '
        '(curated facts; 0.8, ×0.995 a day) or `context` (what is happening now; 0.5, ×0.95 a day, expires after '
        '`lifecycle.context_ttl_days`, default 7).'
    ),
]
Importance = Annotated[
    float,
    Field(
        description='Ranking weight in 0.0–2.0: starts at the category’s value, decays daily, ×1.1 each time a read '
        '(`/query`, `/context`, `/chat`, MCP recall) returns the row.'
    ),
]
ValidFrom = Annotated[
    str | None, Field(description='Start of the valid time (RFC 3339, UTC): the date the source stated, else when it became known.')
]
ValidUntil = Annotated[
    str | None,
    Field(
        description='End of the valid time (RFC 3339, UTC): a date the source stated, or when the row was superseded, forgotten, '
        'deleted or expired; null while it holds open-ended.'
    ),
]
KnownAt = Annotated[
    str | None,
    Field(description='When it became known (RFC 3339, UTC): the `observedAt` of the write it came from, else when it was stored.'),
]
StoredAt = Annotated[str | None, Field(description='When it was stored (RFC 3339, UTC).')]
EntityRef = Annotated[str, Field(description='An entity reference, `entity:<type>/<normalised name>` (e.g. `entity:person/ada lovelace`).')]
TraceLatency = Annotated[float, Field(description='How long the read took, in milliseconds.')]
GrantMap = Annotated[
    Grants,
    Field(
        description='Scope patterns per verb (`memory:read`, `memory:write`, `memory:forget`, `grant:manage`): `org/acme` is that '
        'node, `org/acme/*` the node and its descendants, `*` the whole context. A verb with no patterns grants nothing.'
    ),
]


class Wire(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra='forbid', defer_build=True, use_attribute_docstrings=True
    )


class Problem(Wire):
    """RFC 7807 problem details (application/problem+json); `message` repeats `detail`."""

    type: str
    """A URI naming the kind of error, e.g. `https://agent-memory.dev/errors/not-found`."""
    title: str
    """A short, fixed summary of the kind of error (`Not found`, `Bad request`, …)."""
    status: int
    """The HTTP status code, repeated."""
    detail: str
    """What went wrong with this request, in words (never a stack trace; an internal error names only a request id)."""
    instance: str | None = None
    """The request path the error is about."""
    message: str
    """The same text as `detail`, for clients that read `message`."""


class Page(Wire):
    """Cursor pagination: walk until `hasMore` is false (visibility filters after the page bound, so a page can hold
    fewer rows than `limit` while more follow)."""

    has_more: bool
    """Whether another page follows."""
    next_cursor: str | None
    """Pass as `cursor` to get the next page; null on the last page."""


# ---- health --------------------------------------------------------------------------------------------
class Health(Wire):
    """Whether the service is up and can reach its database (no key needed)."""

    status: Literal['ok', 'unavailable']
    """`ok`, or `unavailable` (with status 503) when the database cannot be reached."""
    db: Literal['ok', 'unreachable']
    """The database check: `ok` or `unreachable`."""


# ---- memory rows -----------------------------------------------------------------------------------------
class Source(Wire):
    """Provenance: which write a fact came from and who made it."""

    kind: str | None
    """`turn` (extracted from a conversation turn) or `upsert` (an explicit write: triples, a resolved uncertainty, a
    persisted reflection)."""
    ref: str | None
    """The record it came from: `turn:<id>`, `uncertainty:<id>`, or for triples sent without text `decision_trace:<id>`."""
    session_id: str | None
    """The session of the write it came from; null when it had none (a resolved uncertainty)."""
    principal: str | None
    """The principal the write was made as (on a delegated write, the principal acted for)."""


class EntityDetail(Wire):
    """An entity: a person, organisation, project, … identified by its type and normalised name."""

    id: EntityRef
    name: str
    """The display name: as first written, or for a self entity the name its person gave (else the principal's
    `displayName`)."""
    entity_type: str
    """One of `person`, `organisation`, `project`, `location`, `topic`, `product`, `policy`, `concept`, `event`,
    `agent`, `service`, `other`."""
    memory_category: Category
    importance: Importance
    created_at: StoredAt
    updated_at: str | None
    """When a write last touched it (named it, or wrote a fact about it), RFC 3339, UTC."""


class AttributeDetail(Wire):
    """One value of one attribute (`key`) of an entity, with its validity and provenance."""

    id: str
    """The attribute's reference, `attribute:<id>`."""
    entity: EntityRef
    key: str
    """The attribute's name (`plan`, `employer`, `location`, …)."""
    value: Any
    """The value, as text."""
    memory_category: Category
    importance: Importance
    confidence: float | None
    """How sure the source was, 0.0–1.0 (explicit writes 1.0 unless given; a value below the context's
    `reconciliation.confidence_floor`, default 0.7, never supersedes and raises an uncertainty instead)."""
    valid_from: ValidFrom
    valid_until: ValidUntil
    supersedes: str | None
    """The attribute this value replaced (`attribute:<id>`), if any."""
    superseded_by: str | None
    """The attribute that replaced this value (`attribute:<id>`); null while it is the current value."""
    source: Source | None
    """Where the value came from; null when unknown."""
    created_at: KnownAt
    tentative: bool
    """True while an open uncertainty came from the same turn: treat the value as unconfirmed."""


class RelationDetail(Wire):
    """A labelled edge between two entities (`Ada works_at Acme`)."""

    id: str
    """The relation's reference, `relates_to:<id>`."""
    subject: EntityRef
    label: str
    """What the relation says, snake_case (`works_at`, `manages`, `sister_of`, …)."""
    object: EntityRef
    memory_category: Category
    importance: Importance
    source: Source | None
    """Where the relation came from; null when unknown."""
    valid_from: ValidFrom
    valid_until: ValidUntil
    created_at: KnownAt


class ActionDetail(Wire):
    """Something an entity did (`Ada moved to Porto`), with when it happened."""

    id: str
    """The action's reference, `action:<id>`."""
    actor: EntityRef
    verb: str
    """What was done, as a verb (`moved`, `adopted`, …)."""
    object: str | None
    """The entity acted on (`entity:<type>/<name>`), when it is one."""
    object_text: str | None
    """What was acted on, in words, when it is not an entity."""
    summary: str
    """The action as one sentence."""
    occurred_at: str | None
    """When it happened (RFC 3339, UTC), when the source said so."""
    memory_category: Category
    importance: Importance
    valid_from: ValidFrom
    valid_until: ValidUntil
    created_at: KnownAt


class InstructionDetail(Wire):
    """A standing instruction from the user ("always answer in French"); active until superseded."""

    id: str
    """The instruction's reference, `instruction:<id>`."""
    label: str
    """A short name for the instruction (`language`, `format`, …)."""
    description: str
    """The instruction in words, as it reaches a prompt."""
    created_at: StoredAt
    merged_count: int
    """How many later statements of the same instruction were merged into this one."""


class UncertaintyDetail(Wire):
    """Something memory is unsure about: conflicting values, a hedge, a date it could not resolve."""

    id: str
    """The uncertainty's reference, `uncertainty:<id>` (its id is what `POST /uncertainty/{id}/resolve` takes)."""
    about: str
    """What it is about: `entity:<type>/<name> <key>` for a value, else words from the turn."""
    reason: str
    """Why memory is unsure, in words."""
    kind: str
    """The kind of doubt: `confidence_floor` (a value too unsure to replace the current one), `cross_provenance` (a
    conversation contradicting an explicit write), or from extraction `hedge`, `self_correction`, `contradiction`,
    `ambiguous_reference`, `unresolved_time`, `sarcasm`, `other`."""
    resolved: bool
    """Whether it has been settled (by a resolve call, or by a later confident value at the same address)."""
    resolved_by: str | None
    """The turn whose confident value settled it (bare id); null while open or when settled by a resolve call."""
    resolved_at: str | None
    """When it was settled (RFC 3339, UTC); null while open."""
    source_turn: str | None
    """The turn it came from (bare id); null for explicit writes."""
    entity: str | None
    """The entity it is about (`entity:<type>/<name>`), when it is about one."""
    key: str | None
    """The attribute key it is about, when it is about one."""
    resolvable: bool
    """True when it names one entity and key, so `POST /uncertainty/{id}/resolve` can settle it with a value."""
    created_at: StoredAt


# ---- writes ------------------------------------------------------------------------------------------------
class Extraction(BaseModel):
    """What an extraction (or an explicit write) changed: rows per kind; a finished job may add its own fields."""

    model_config = ConfigDict(extra='allow', defer_build=True, use_attribute_docstrings=True)

    turn_id: str | None = Field(default=None, alias='turnId')
    """The turn it was extracted from (bare id); null for triples sent without text."""
    entities: list[Json] = Field(default_factory=list)
    """Entities it touched: `{id, name, entityType, memoryCategory, isNew}`."""
    attributes: list[Json] = Field(default_factory=list)
    """Attribute values it wrote: `{id, entityId, key, value, memoryCategory}`."""
    relations: list[Json] = Field(default_factory=list)
    """Relations it wrote: `{subject, label, object, memoryCategory}`."""
    actions: list[Json] = Field(default_factory=list)
    """Actions it wrote: `{actor, verb, object?, objectText?, summary, occurredAt?, memoryCategory}`."""
    instructions: list[Json] = Field(default_factory=list)
    """Instructions it created or merged into an existing one: `{id, label, description}`."""
    uncertainties: list[Json] = Field(default_factory=list)
    """Uncertainties it raised: `{about, reason}`."""
    corrections: list[Json] = Field(default_factory=list)
    """Values it superseded: `{entityId, key, oldValue, newValue}`."""


class FactsResult(Wire):
    """`POST /facts`: 200 stored (`none`, `triples`, `preview`, or `full` finished within `Prefer: wait`), 202 queued."""

    mode: Literal['full', 'triples', 'preview', 'none']
    """The `infer` mode the request ran in."""
    session_id: str | None
    """The session written to (created when the request named none); for `preview`, the session named, if any."""
    turn_id: str | None
    """The stored turn (bare id); null for `preview` and for `triples` without text."""
    chunk_id: str | None = None
    """`none` only: the first memory chunk (passage) the text was stored as."""
    status: Literal['queued', 'done'] | None = None
    """`full` only: `queued` (202; poll `GET /extractions/{turnId}`) or `done` (200, finished within `Prefer: wait`)."""
    extraction: Extraction | None = None
    """What was extracted and reconciled (`triples`, `preview`, or `full` when done); `preview` persisted none of it."""
    trace_id: str | None = None
    """`triples` only: the decision trace of the reconciliation, `decision_trace:<id>`."""
    preview: bool | None = None
    """`preview` only: true — nothing was stored."""


class FactsBatchResult(Wire):
    """`POST /facts/batch`: the stored turns, in the order of the messages."""

    session_id: str | None
    """The session every message went to (created when the request named none)."""
    turn_ids: list[str]
    """The stored turns (bare ids), one per message, in order."""
    status: Literal['queued', 'stored', 'done']
    """`queued` (202, extraction queued), `stored` (`infer: none`, nothing to extract) or `done` (200, extracted within
    `Prefer: wait`)."""
    extractions: list[Extraction] | None = None
    """When `done`: each extraction job's result (one per message with `extract: per_message`, else one)."""


class ExtractionStatus(Wire):
    """Where the extraction of one turn stands."""

    turn_id: str
    """The turn, as asked for."""
    status: str
    """`queued`, `running`, `done`, `failed` (retries exhausted; see `error`) or `none` (the turn was never queued)."""
    extraction: Extraction | None = None
    """When `done`: what was extracted and reconciled."""
    mode: str | None = None
    """How it was extracted: `stage0` (the built-in rules only) or the structured-output mode of the LLM stage
    (`json_schema`, `json_object`, `prompt`)."""
    llm_error: str | None = None
    """Why the LLM stage failed and stage 0 was kept, classified (`rate_limited`, `timeout`, `unreachable`,
    `server_error`, `auth_failed`, `model_not_found`, `not_found`, `context_exceeded`, `request_rejected`,
    `malformed_response`, `invalid_output`); never the provider's own text."""
    error: str | None = None
    """Why the extraction itself failed (`failed`, or a retry pending)."""


class SessionCreated(Wire):
    """A new session."""

    id: str
    """The session id (the one asked for, else a generated `sess_<id>`)."""
    scopes: ScopeSets
    """The scope sets its turns are written to by default: an OR of AND-clauses of scope paths."""
    metadata: Json
    """The metadata sent at creation, unchanged."""
    created_at: StoredAt


class Turn(Wire):
    """One message of a session."""

    id: str
    """The turn (bare id)."""
    session: str
    """The session id."""
    role: str
    """`user`, `assistant`, `system` or `tool`."""
    content: str
    """The message text."""
    seq: int
    """Its position in the session, from 1."""
    created_at: StoredAt
    observed_at: str | None
    """When it was said (RFC 3339, UTC): the request's `observedAt` (or a batch message's `ts`), else when it was stored."""
    extraction: str | None
    """Extraction status: `queued`, `running`, `done`, `failed`, or null when none was asked for."""


class TurnPage(Wire):
    """A page of a session's turns, oldest first."""

    turns: list[Turn]
    """The turns visible to the caller, in `seq` order."""
    page: Page
    """Pagination: `nextCursor` is the offset of the next page."""


# ---- reads ---------------------------------------------------------------------------------------------------
class Hit(Wire):
    """One retrieved row: a fact (entity, attribute, relation, action) or a passage (what was said, verbatim)."""

    id: str
    """The row's reference (`attribute:<id>`, `entity:<type>/<name>`, `relates_to:<id>`, `action:<id>`,
    `memory_chunk:<id>`)."""
    score: float
    """Relevance: the reciprocal-rank-fusion score over the ranked lists, weighted by importance; higher is better,
    comparable only within one response."""
    source: str
    """What kind of row it is: `attribute`, `entity`, `relation`, `action` or `memory_chunk` (a passage)."""
    text: str
    """The row as one line of text (`Ada employer: Acme`, `Ada works at Acme`, or the passage itself)."""
    occurred_at: str | None
    """When it was said (a passage) or became known (a fact), RFC 3339, UTC."""
    resource: Json
    """The row's parts, by `kind`: `attribute` {entityType, name, key}, `entity` {entityType, name}, `relation`
    {label, subjectType, subjectName, objectType, objectName}, `action` {actorType, actorName, objectType?,
    objectName?}, `session` (a passage) {sessionId, turnId}."""
    role: str | None = None
    """A passage's speaker role (`user`, `assistant`, …); absent on facts."""


class QueryTrace(Wire):
    """The retrieval trace `POST /query` wrote."""

    trace_id: str
    """The trace, `retrieval_trace:<id>` (`GET /traces/{id}`)."""
    resolution_tier: str
    """Always `hybrid` here: `/query` is fresh retrieval, never the response cache."""
    tier_reason: str
    """How the candidates were found, in words (`hybrid: 87 candidates from 5 lists; tier 1 seeded 2 structured rows`)."""
    latency_ms: float
    """Retrieval time in milliseconds."""
    retrieved_count: int
    """How many candidates the fused pool held before the top `k` were taken (at most 256)."""
    top_scores: list[float]
    """The scores of the best (up to 5) hits."""


class QueryResult(Wire):
    """Ranked recall: the best `k` rows for the query, and the structured lookups that did not make the cut."""

    tier: str
    """Always `hybrid` (fresh retrieval)."""
    hits: list[Hit]
    """The best `k` rows, best first, filtered by `include`."""
    context_hits: list[Hit]
    """Rows the direct entity + key lookup (tier 1) found that are not among `hits`: likely answers to keep in view."""
    seed_entities: list[str]
    """The entities the query named or implied (its own self entity for first-person questions), as `type/name`;
    graph expansion started from them."""
    query_ms: float
    """Retrieval time in milliseconds."""
    trace: QueryTrace
    """The retrieval trace this read wrote."""


class ContextBlock(Wire):
    """A markdown block for a system prompt: instructions, the caller's profile, relevant facts and passages (with dates
    and speakers). No LLM, never cached."""

    context: str
    """The markdown block (`## Instructions`, `## Profile`, `## Relevant facts`, `## Passages`; `## Memory` when
    nothing is stored yet)."""
    query_ms: float
    """Retrieval time in milliseconds."""
    tier: str
    """Always `hybrid` (fresh retrieval)."""
    trace_id: str
    """The retrieval trace this read wrote, `retrieval_trace:<id>`."""


class SessionContextBlock(Wire):
    """Without a query the block holds the session's recent turns only, and no retrieval trace is written."""

    context: str
    """The markdown block; the session's recent turns come last, under `## Recent conversation`, each with its speaker."""
    session_id: str
    """The session, as asked for."""
    trace_id: str | None = None
    """The retrieval trace, `retrieval_trace:<id>`, when there was something to retrieve for."""


class Reflection(Wire):
    """A synthesis over memory for a query (fresh retrieval, never the cache)."""

    reflection: str
    """The synthesised text (by the configured LLM, else the extractive composer), with `[S1]`-style markers."""
    evidence: list[str]
    """The texts of the rows it cites (or, when it cites none, of the top five rows retrieved)."""
    persisted_attributes: list[Json]
    """With `persist: true`: the `reflection` attribute written (`{id, entityId, key, value, memoryCategory}`); else empty."""
    trace_id: str
    """The response trace, `response_trace:<id>`."""


class ForgetMatch(Wire):
    """A row the forget query matched."""

    id: str
    """The matched attribute (`attribute:<id>`) or entity (`entity:<type>/<name>`)."""
    text: str
    """The row as one line of text."""
    similarity: float
    """Cosine similarity to the query, 0.0–1.0 (only rows at or above the forget threshold match)."""


class ForgetResult(Wire):
    """`dryRun` lists what would go and deletes nothing; otherwise `purged` says whether rows were erased or closed."""

    deleted: int
    """How many rows were closed (soft) or erased (`purge`); 0 on a dry run."""
    matched: list[ForgetMatch]
    """What the query matched, most similar first."""
    dry_run: bool | None = None
    """Present and true on a dry run."""
    purged: bool | None = None
    """Whether the rows were erased with their history (`purge`) rather than closed; absent on a dry run."""


class Citation(Wire):
    """A source the reply was built from."""

    marker: str
    """The marker the reply uses for it, `[S1]`, `[S2]`, … in order of first use."""
    id: str
    """The cited row's reference (`attribute:<id>`, `memory_chunk:<id>`, …)."""
    kind: str
    """`attribute`, `entity`, `relation`, `action` or `memory_chunk` (a passage)."""
    snippet: str
    """The row's text, at most 280 characters."""
    score: float
    """Its retrieval score (see `Hit.score`)."""
    role: str | None
    """A passage's speaker role; null for facts."""


class MemoryUpdates(Wire):
    """What `/chat` stored after replying."""

    turn_id: str
    """The stored user turn (bare id)."""
    status: Literal['queued', 'stored']
    """`queued`: the message's statements go to extraction; `stored`: no extraction queue is configured."""
    reply_stored: bool
    """Whether the reply was stored as an assistant turn of the session: false when no scope inside the caller's write
    region can hold it privately enough (it was built from rows of narrower scopes)."""


class ChatReply(Wire):
    """With `stream: true` or `Accept: text/event-stream` the same answer comes as server-sent events: each frame's
    data is `{delta, traceId, sessionId}`, the last `{done: true, …this object}`."""

    reply: str
    """The answer, with `[S1]`-style markers (stripped with `suppressMarkers`). It states a value only when a current
    fact or passage answers the question; otherwise it says memory holds nothing on it."""
    session_id: str
    """The session the message and reply were stored in (created when the request named none)."""
    trace_id: str
    """The response trace, `response_trace:<id>`."""
    retrieval_trace_id: str
    """The retrieval trace, `retrieval_trace:<id>` (tier 2 on a cache hit)."""
    cached: bool
    """True when the answer was served from the semantic response cache without calling the LLM."""
    tier: Literal['cache', 'hybrid']
    """`cache` (a reused answer) or `hybrid` (fresh retrieval and synthesis)."""
    citations: list[Citation]
    """Every source the answer was built from, in marker order."""
    memory_updates: MemoryUpdates
    """What was stored after the reply."""


class CategoryState(Wire):
    """The current rows of one memory category, newest first, each list at most `limit` long."""

    entities: list[EntityDetail]
    """Entities of this category."""
    attributes: list[AttributeDetail]
    """Current attribute values of this category."""
    relations: list[RelationDetail]
    """Current relations of this category."""
    actions: list[ActionDetail]
    """Current actions of this category."""


class Unknown(Wire):
    """An open uncertainty, briefly."""

    about: str
    """What it is about (see `UncertaintyDetail.about`)."""
    reason: str
    """Why memory is unsure, in words."""


class Truncated(Wire):
    """Per section: true when some category had more rows than `limit` (the rest were left out)."""

    entities: bool
    """Some category had more entities than `limit`."""
    attributes: bool
    """Some category had more attributes than `limit`."""
    relations: bool
    """Some category had more relations than `limit`."""
    actions: bool
    """Some category had more actions than `limit`."""
    instructions: bool
    """There were more active instructions than `limit`."""
    unknowns: bool
    """There were more open uncertainties than `limit`."""


class State(Wire):
    """One section per memory category, then the instructions and open unknowns; `truncated` flags lists cut at `limit`."""

    identity: CategoryState
    """Identity-category rows: who someone is."""
    knowledge: CategoryState
    """Knowledge-category rows: curated facts."""
    context: CategoryState
    """Context-category rows: what is happening now."""
    instructions: list[InstructionDetail]
    """The active instructions."""
    unknowns: list[Unknown]
    """The open uncertainties."""
    truncated: Truncated
    """Which lists were cut at `limit`."""


class ProfileEntry(Wire):
    """One current attribute value in the profile."""

    key: str
    """The attribute's name."""
    value: Any
    """The value, as text."""
    entity: str
    """The display name of the entity it is about (for the caller's own facts, the name the user gave, else the
    principal's `displayName`)."""
    entity_type: str
    """The entity's type (`person` for the caller's own facts)."""
    importance: Importance
    valid_until: ValidUntil
    tentative: bool
    """True while an open uncertainty came from the same turn."""


class Profile(Wire):
    """An entity-driven briefing grouped by memory category (no query, no reinforcement). The caller's own facts (its
    self entity's attributes) are in `selfFacts` and also lead the section of their category, so clients that read only
    `static`/`dynamic`/`preferences` see them too. Each list: current, visible rows, newest first, at most 500."""

    self_facts: list[ProfileEntry]
    """The caller's own facts: the attributes of its self entity, any category."""
    static: list[ProfileEntry]
    """Identity-category attributes (no decay): the caller's own first, then those of other entities."""
    dynamic: list[ProfileEntry]
    """Context-category attributes (decay ×0.95 a day, expire after the context TTL): the caller's own first."""
    preferences: list[ProfileEntry]
    """Knowledge-category attributes (decay ×0.995 a day): the caller's own first."""
    instructions: list[InstructionDetail]
    """The active instructions."""


class UncertaintyPage(Wire):
    """A page of uncertainty flags, oldest first."""

    uncertainties: list[UncertaintyDetail]
    """The flags visible to the caller."""
    page: Page
    """Cursor pagination: pass `page.nextCursor` as `cursor` for the next page."""


class UncertaintyResolved(Wire):
    """A settled uncertainty and what settling it wrote."""

    uncertainty: UncertaintyDetail
    """The flag, now `resolved`."""
    attributes: list[Json]
    """The accepted value as written: `{id, entityId, key, value, memoryCategory}` (empty when it was already current)."""
    corrections: list[Json]
    """Values it replaced: `{entityId, key, oldValue, newValue}` (an old value only where the caller can read it)."""


class ImportStarted(Wire):
    """An import opened: send the export's records to it, then commit it."""

    import_id: str
    """The import's id, for the records, the commit and the discard routes."""
    context: str
    """The context being restored into."""
    records: int
    """How many records (after the header) the file announces."""


class ImportStaged(Wire):
    """A batch of lines checked and staged (not yet visible)."""

    received: int
    """How many lines the batch held."""
    staged: int
    """How many of them were new (a batch sent again stages nothing twice)."""


class ImportCommitted(Wire):
    """How far the commit got: while `done` is false, call it again (it resumes)."""

    context: str
    """The context being restored into."""
    source_context: str
    """The context the export was made from."""
    done: bool
    """Whether every record is written (the context's config and decay clock applied, the import closed)."""
    written: int
    """Rows this call wrote."""
    counts: dict[str, int] | None
    """Records per kind, once done; null before."""
    ms: int
    """Milliseconds this call took."""


class Me(Wire):
    """Who the key speaks for, and with which grants."""

    context_id: str
    """The context the key belongs to (a key belongs to one)."""
    principal_id: str
    """The principal the key belongs to."""
    display_name: str
    """The display name of the principal the request acts as (the delegated one when delegating)."""
    kind: str
    """The kind of the principal the request acts as: `human`, `agent` or `service`."""
    grants: Grants
    """The grants of the key's principal, before the key's attenuation: scope patterns per verb."""
    token_grants: Grants | None
    """The key's own attenuating grants; null when the key carries its principal's grants unchanged."""
    effective_grants: Grants
    """What this request may do: the principal's grants ∩ the key's (when delegating, the target's grants within the
    manager's `grant:manage` region), `memory:read` narrowed by `lens`."""
    delegated_principal_id: str | None
    """The principal acted for through `X-Memory-On-Behalf-Of`; null without delegation."""


class EntityView(Wire):
    """An entity with its current attribute values and its current relations (both directions)."""

    entity: EntityDetail
    """The entity itself: its name, type, category and importance."""
    attributes: list[AttributeDetail]
    """Its current attribute values."""
    relations: list[RelationDetail]
    """Its current relations, where it is the subject or the object."""


class EntityPage(Wire):
    """A page of entities, in id order."""

    entities: list[EntityDetail]
    """The entities visible to the caller."""
    page: Page
    """Cursor pagination: pass `page.nextCursor` as `cursor` for the next page."""


class AttributeHistory(Wire):
    """Every value one attribute of an entity has had."""

    history: list[AttributeDetail]
    """Newest first, superseded and expired values included."""


# ---- traces ------------------------------------------------------------------------------------------------
class ResponseTrace(Wire):
    """A synthesised answer (`/chat`, `/reflect`) as recorded: it is also the semantic response cache's entry."""

    id: str
    """The response trace, `response_trace:<id>`."""
    user_message: str | None
    """The message or query answered; null when `redacted`."""
    response_text: str | None
    """The reply; null when `redacted`."""
    redacted: bool
    """True when the reader may not see every text of it now: the texts are null and the citations hold only the rows
    the reader may read."""
    cached: bool
    """True when this answer was served from the cache (see `reusedFrom`)."""
    reused_from: str | None
    """On a cache hit: the original answer reused, `response_trace:<id>`."""
    cache_eligible: bool
    """Whether this answer may be served from the cache to later questions (a windowed session turn, a per-call `model`
    or an answer without recorded sources may not)."""
    citations: list[Json]
    """The sources it was built from, as in `ChatReply.citations` (only readable rows when `redacted`)."""
    model: str | None
    """The LLM that wrote it; null for the extractive composer (no LLM)."""
    tokens: Any
    """Token usage reported by the LLM, `{prompt, completion}`; null without an LLM."""
    session_id: str | None
    """The session it was made in, if any."""
    latency_ms: float | None
    """How long answering took, in milliseconds."""
    created_at: StoredAt


class Retrieval(Wire):
    """One retrieval: what was found and returned."""

    id: str
    """The retrieval trace, `retrieval_trace:<id>`."""
    mode: str
    """The retrieval mode: `hybrid`, `vector`, `bm25` or `graph`."""
    tier_entered: int
    """1 (a direct structured lookup), 2 (a response cache hit) or 3 (hybrid retrieval)."""
    tier_reason: str
    """Why that tier, in words."""
    latency_ms: float
    """Retrieval time in milliseconds."""
    retrieved_ids: list[str]
    """The references of the rows returned, in rank order."""
    scores: list[float]
    """Their scores, in the same order."""
    returned: list[Json]
    """The rows returned: `{id, table, rank, score, occurredAt}`."""
    created_at: StoredAt


class TraceRecord(Wire):
    """A retrieval trace with the response it fed (`parent`, when one did)."""

    id: str
    """The retrieval trace, `retrieval_trace:<id>`."""
    query_text: str | None
    """The query or message; null when `redacted`."""
    redacted: bool
    """True when the reader's grants do not cover the region the trace was made under: `queryText` is null and only
    the rows the reader may read are listed."""
    endpoint: str | None
    """What made it: `query`, `context`, `session_context`, `reflect`, `chat`, `mcp.recall` or `mcp.context`."""
    resolution_tier: str
    """The tier by name: `direct`, `cache` or `hybrid`."""
    tier_entered: int
    """The tier by number: 1 direct, 2 cache, 3 hybrid."""
    tier_reason: str
    """Why that tier, in words."""
    cached: bool
    """True when the response it fed was a cache hit."""
    latency_ms: float
    """Retrieval time in milliseconds."""
    created_at: StoredAt
    session_id: str | None
    """The session the read was made in, if any."""
    source: str | None
    """The caller's own label for the read (`source` on `POST /query`), if any."""
    parent: ResponseTrace | None
    """The answer this retrieval fed (`/chat`, `/reflect`); null for plain reads."""
    retrievals: list[Retrieval]
    """The retrieval itself (one entry)."""


class TracePage(Wire):
    """A page of retrieval traces, newest first: every principal's for a key with `grant:manage` over `*`, else the
    caller's own."""

    traces: list[TraceRecord]
    """The traces on this page, each with the answer it fed."""
    page: Page
    """Cursor pagination (the cursor is the last trace's `createdAt`)."""


class Reuse(Wire):
    """A later answer that reused this one from the cache."""

    id: str
    """The reusing response trace, `response_trace:<id>`."""
    created_at: StoredAt
    latency_ms: float | None
    """How long the cache hit took, in milliseconds."""


class RetrievalTraceDetail(TraceRecord):
    """A retrieval trace by id, with the answer it fed and the cache hits that reused that answer."""

    kind: Literal['retrieval']
    """Which kind of object this is: always `retrieval` here."""
    reused_by: list[Reuse]
    """The caller's own later answers that reused the answer from the cache."""


class ResponseTraceDetail(Wire):
    """A response written without a retrieval (a cache hit's own trace keeps its retrieval; this is the rest)."""

    id: str
    """The response trace, `response_trace:<id>`."""
    kind: Literal['response']
    """Which kind of object this is: always `response` here."""
    parent: ResponseTrace | None
    """The response itself."""
    retrievals: list[Retrieval]
    """Always empty: this response had no retrieval."""
    reused_by: list[Reuse]
    """Always empty: only an answer with a retrieval trace lists the cache hits that reused it."""


class DecisionTraceDetail(Wire):
    """What one reconciliation decided: an extraction or an explicit write, row by row."""

    id: str
    """The decision trace, `decision_trace:<id>`."""
    kind: Literal['decision']
    """Which kind of object this is: always `decision` here."""
    turn_id: str | None
    """The turn reconciled (bare id); null for triples sent without text."""
    input: Any
    """What was reconciled: `{infer: "triples", triples}` or `{infer: "full", extraction}`; null when `redacted`."""
    outcomes: Any
    """Per record: `{record, outcome}` with outcome `created`, `updated`, `superseded`, `closed`, `merged`, `flagged`
    or `resolved`."""
    redacted: bool
    """True when the reader cannot read the scope the write went to: `input` is null and only readable records are
    listed."""
    latency_ms: float | None
    """How long the reconciliation took, in milliseconds."""
    created_at: StoredAt


TraceDetail = Annotated[RetrievalTraceDetail | ResponseTraceDetail | DecisionTraceDetail, Field(discriminator='kind')]


class Trace(RootModel[TraceDetail]):
    """One trace by id, with its one-hop neighbourhood."""

    model_config = ConfigDict(defer_build=True)


class TraceStats(Wire):
    """Aggregates over the caller's traces (every principal's with `grant:manage` over `*`) in a time window."""

    window_hours: int
    """The window, in hours back from now."""
    total_queries: int
    """Retrieval traces in the window."""
    avg_latency_ms: float
    """Their mean latency in milliseconds."""
    cache_hits: int
    """Answers served from the response cache."""
    response_traces_cached: int
    """The same count as `cacheHits`."""
    response_traces_total: int
    """All answers (response traces) in the window."""
    cache_hit_rate: float
    """`cacheHits / responseTracesTotal`, 0.0–1.0 (0 when there were no answers)."""
    tier_counts: dict[str, int]
    """Retrieval traces per tier: `{direct, cache, hybrid}`."""
    endpoints: dict[str, int]
    """Retrieval traces per endpoint (`query`, `context`, `chat`, …)."""


class InspectedEntity(EntityView):
    """An `entity:<type>/<name>` ref: the entity with its current attributes and relations."""

    kind: Literal['entity']
    """Which kind of object this is: always `entity` here."""


class InspectedAttribute(Wire):
    """An `attribute:<type>/<name>/<key>` ref: the current value and every value it has had."""

    kind: Literal['attribute']
    """Which kind of object this is: always `attribute` here."""
    current: AttributeDetail | None
    """The current value; null when none is current (superseded, expired or forgotten)."""
    history: list[AttributeDetail]
    """Every value, newest first."""


class InspectedTrace(BaseModel):
    """A trace ref: the trace as `GET /traces/{id}` shows it, its own kind in `traceKind`."""

    model_config = ConfigDict(extra='allow', defer_build=True, use_attribute_docstrings=True)

    kind: Literal['trace']
    """Which kind of object this is: always `trace` here."""
    trace_kind: Literal['retrieval', 'response', 'decision'] = Field(alias='traceKind')
    """The trace's own kind."""
    id: str
    """The trace's reference (`retrieval_trace:<id>`, `response_trace:<id>` or `decision_trace:<id>`)."""


Inspected = Annotated[InspectedEntity | InspectedAttribute | InspectedTrace, Field(discriminator='kind')]


class Inspection(RootModel[Inspected]):
    """The object a typed ref names: `entity:<type>/<name>`, `attribute:<type>/<name>/<key>` or `trace:<id>`."""

    model_config = ConfigDict(defer_build=True)


class SweepResult(Wire):
    """What a lifecycle sweep did."""

    affected: int
    """Rows changed: facts decayed, facts expired, traces purged, or vector indexes rebuilt."""
    ms: float
    """How long it took, in milliseconds."""


# ---- tenancy -------------------------------------------------------------------------------------------------
CONFIG_DESCRIPTION = (
    'The effective config (defaults merged under the stored override): `response_cache` {enabled: true, '
    'similarity_threshold: 0.92, freshness_window_seconds: 3600}, `trace_retention` {decision_trace_days: null '
    '(forever), retrieval_trace_days: 90, response_trace_days: 90}, `reconciliation` {confidence_floor: 0.7}, '
    '`lifecycle` {context_ttl_days: 7}, `models` {extraction, synthesis, embedding: null = the server default}, '
    '`rate_limit` {enabled: true, requests_per_minute: 1200, burst: 200}.'
)


class ContextSummary(Wire):
    """A context (tenant), briefly."""

    id: str
    """The context id, as used in data-plane paths (`/api/v1/{context_id}/…`)."""
    created_at: StoredAt


class ContextView(Wire):
    """A context with its effective config."""

    id: str
    """The context id."""
    description: str | None
    """The description given at creation, if any."""
    config: Json = Field(description=CONFIG_DESCRIPTION)
    created_at: StoredAt


class PrincipalView(Wire):
    """Who keys act as: a person, an agent or a service, with its grants."""

    id: str
    """The principal id (given, else a generated `p_<id>`); `admin` and `system` are reserved."""
    display_name: str
    """Its name, unique in the context; it names the principal's self entity until the user gives a name."""
    kind: Literal['human', 'agent', 'service']
    """What it is: `human`, `agent` or `service`."""
    grants: GrantMap
    default_scopes: ScopeSets
    """Where its writes go when they name no `scopes` (an OR of AND-clauses of scope paths; `/` is the root)."""
    external_id: str | None
    """The caller's own id for it; creating a principal with an existing `externalId` returns that one."""
    created_at: StoredAt


class KeyView(Wire):
    """A key as clients see it: never its hash; `secret` only in the answer to a mint or a rotation."""

    name: str
    """The key's name, unique per principal."""
    principal_id: str
    """The principal it acts as."""
    grants: Grants | None
    """Its own attenuating grants (never wider than the principal's); null: the principal's grants, whatever they become."""
    expires_at: str | None
    """When it stops working (RFC 3339, UTC); null: never."""
    created_at: StoredAt
    secret: str | None = None
    """The bearer secret, shown only in this answer; it is stored only as an HMAC."""


class OwnKey(KeyView):
    """One of the calling principal's keys."""

    current: bool
    """True for the key that made this request."""


class OwnKeys(Wire):
    """The calling principal's keys."""

    keys: list[OwnKey]
    """Every key of the principal, expired ones included until deleted."""
