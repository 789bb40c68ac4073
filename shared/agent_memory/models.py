"""Request models: the validated shapes of what callers send (snake_case, camelCase accepted)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.clock import parse_observation, parse_timestamp
from agent_memory.speakers import check_speaker_name
from agent_memory.vocabulary import MemoryCategory, names_self_entity

InferMode = Literal['full', 'triples', 'preview', 'none']
Role = Literal['user', 'assistant', 'system', 'tool']
SESSION_ID_PATTERN = r'^[A-Za-z0-9_.:-]{1,128}$'


def _alias(*names: str, description: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names), description=description)


class StrictModel(BaseModel):
    # schemas are built on a model's first use, so a cold start pays only for the models its request validates
    model_config = ConfigDict(extra='forbid', populate_by_name=True, str_strip_whitespace=False, defer_build=True)


class EntityRefIn(StrictModel):
    """An entity named in an explicit write (a triple's subject or target)."""

    type: str = Field(
        min_length=1,
        max_length=64,
        description='person, organisation, project, location, topic, product, policy, concept, event, agent, service or other; '
        'synonyms fold (company, org → organisation), anything else becomes `other`.',
    )
    name: str = Field(
        min_length=1,
        max_length=256,
        description='Its name: identity is the type plus the name case-folded with spaces collapsed. `self` and `self:…` are '
        "reserved for principals' own entities (400).",
    )

    @field_validator('name')
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('name must not be blank')
        if names_self_entity(value):
            raise ValueError("self entities are reserved: only extraction of a principal's own first-person turns writes them")
        return value


class Triple(StrictModel):
    """One explicit fact: an attribute (`entity`, `key`, `value`) or a relation (`entity`, `key` as the label, `target`)."""

    entity: EntityRefIn = Field(description='The entity the fact is about (created when new).')
    key: str = Field(
        min_length=1, max_length=128, description='The attribute key (`plan`, `employer`), or with `target` the relation label.'
    )
    value: str | int | float | bool | None = Field(
        default=None,
        description='The attribute value, stored as text (at most 4096 characters). Exactly one of `value` and `target`; a new value '
        'at the same entity and key supersedes the current one.',
    )
    target: EntityRefIn | None = Field(default=None, description='The other entity: makes the triple the relation `entity –key→ target`.')
    memory_category: MemoryCategory | None = _alias(
        'memory_category',
        'memoryCategory',
        description="`identity`, `knowledge` or `context`; default: the request's `memory_category`, else `knowledge`.",
    )
    confidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="0.0–1.0, default 1.0. Below the context's `reconciliation.confidence_floor` (default 0.7) a value does not "
        'replace the current one: it raises an uncertainty instead.',
    )

    @model_validator(mode='after')
    def _attribute_or_relation(self) -> Triple:
        if (self.value is None) == (self.target is None):
            raise ValueError('a triple needs exactly one of value (attribute) or target (relation)')
        if isinstance(self.value, str) and len(self.value) > 4096:
            raise ValueError('value is longer than 4096 characters')
        return self

    @property
    def value_text(self) -> str:
        if isinstance(self.value, bool):
            return 'true' if self.value else 'false'
        return str(self.value)


def _timestamp(value: Any) -> dt.datetime | None:
    """``asOf``, ``validFrom``, ``validUntil``, ``expiresAt``: RFC 3339 in the accepted range (``clock.EARLIEST``..)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError('must be an RFC 3339 timestamp string')
    return parse_timestamp(value)


def _observed(value: Any) -> dt.datetime | None:
    """``observedAt`` and a batch message's ``ts``: in range, and not in the future beyond a few minutes of skew."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError('must be an RFC 3339 timestamp string')
    return parse_observation(value)


SPEAKER_NAME: Any = Field(
    default=None,
    max_length=128,
    description='The speaker, as in the chat-completions message format: first person ("I", "my") binds to the person of that '
    "name instead of the caller's own self entity. 1–128 characters, at most 8 words; `self` and colons are refused.",
)
ROLE: Any = Field(
    default='user',
    description='Who said it: `user` (default), `assistant`, `system` or `tool`. Only user and system directives become instructions.',
)
SCOPES: Any = Field(
    default=None,
    validation_alias=AliasChoices('scopes', 'scope'),
    description='Where the rows written go: a scope path (`org/acme/user/alice`), a list of paths (any of them) or a list of '
    'AND-clauses (`[["org/acme", "team/x"]]`), at most 32 clauses; it must lie within the caller\'s `memory:write` grant '
    "(else 403). Default: the session's scopes, else the principal's `defaultScopes`.",
)
WRITE_LABELS: Any = Field(
    default_factory=list,
    max_length=32,
    description='`key=value` labels (at most 32; keys must not start with `_`) stamped on the stored passages: reads that pass '
    '`labels` see only passages carrying all of theirs.',
)
WRITE_SESSION: Any = Field(
    default=None,
    validation_alias=AliasChoices('session_id', 'sessionId'),
    pattern=SESSION_ID_PATTERN,
    description='Append to this session (it must exist, be open and lie in the write region: else 403, or 409 when closed); '
    'absent: a new session is created and its id returned.',
)
ADDRESSEES: Any = Field(default=None, max_length=8, description='Accepted for compatibility with other clients (at most 8) and ignored.')
# Each triple costs two embeddings (value and entity) and a few statements in the write's one transaction: 100 keeps
# one request far from API Gateway's 29 s limit.
MAX_TRIPLES = 100


class FactsRequest(StrictModel):
    """One message to remember (and extract facts from), or explicit triples."""

    text: str | None = Field(
        default=None,
        description='The message (at most 64 KiB). Required except with `infer: triples`, where it is stored as the turn the '
        'triples came from.',
    )
    infer: InferMode = Field(
        default='full',
        description='`full` (default): store the turn and queue extraction (202; `Prefer: wait=N`, N ≤ 25 s, waits for it and '
        'answers 200 when done); `triples`: reconcile `triples` now, no LLM (200); `preview`: extract now, store nothing (200); '
        '`none`: store the turn and its passages only, no extraction (200).',
    )
    session_id: str | None = WRITE_SESSION
    role: Role = ROLE
    scopes: Any = SCOPES
    memory_category: MemoryCategory | None = _alias(
        'memory_category',
        'memoryCategory',
        description='Give everything derived from this write this category (`identity`, `knowledge`, `context`); default: '
        '`knowledge` for triples, and extraction decides per fact.',
    )
    labels: list[str] = WRITE_LABELS
    triples: list[Triple] = Field(
        default_factory=list, max_length=MAX_TRIPLES, description='The facts for `infer: triples` (1–100), reconciled in one transaction.'
    )
    observed_at: dt.datetime | None = _alias(
        'observed_at',
        'observedAt',
        description='When it was said (RFC 3339; years 1900–2199, not in the future beyond a few minutes): the known time of the '
        'turn, its passages and its facts, and what relative dates ("yesterday") resolve against. Default: now.',
    )
    addressees: list[str] | None = ADDRESSEES
    name: str | None = SPEAKER_NAME

    _parse_observed = field_validator('observed_at', mode='before')(_observed)
    _check_name = field_validator('name')(check_speaker_name)

    @model_validator(mode='after')
    def _mode_needs(self) -> FactsRequest:
        if self.infer == 'triples' and not self.triples:
            raise ValueError('infer "triples" needs a non-empty triples list')
        if self.infer != 'triples' and (self.text is None or not self.text.strip()):
            raise ValueError(f'infer "{self.infer}" needs a non-empty text')
        for label in self.labels:
            if '=' not in label or label.startswith('_'):
                raise ValueError('labels are "key=value" strings and keys must not start with "_"')
        return self


class BatchMessage(StrictModel):
    """One message of a conversation, in the chat-completions message shape."""

    role: Role = ROLE
    content: str = Field(min_length=1, description='The message text (not blank, at most 64 KiB).')
    ts: dt.datetime | None = Field(default=None, description='When it was said (RFC 3339), as `observedAt` on `POST /facts`. Default: now.')
    addressees: list[str] | None = ADDRESSEES
    name: str | None = SPEAKER_NAME

    _parse_ts = field_validator('ts', mode='before')(_observed)
    _check_name = field_validator('name')(check_speaker_name)

    @field_validator('content')
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('content must not be blank')
        return value


class FactsBatchRequest(StrictModel):
    """A conversation to remember: its messages become turns of one session, in order, in one transaction."""

    messages: list[BatchMessage] = Field(
        min_length=1, max_length=100, description='The messages, in order (1–100, at most 64 KiB of text together: else 413).'
    )
    session_id: str | None = WRITE_SESSION
    scopes: Any = SCOPES
    extract: Literal['whole_conversation', 'per_message'] = Field(
        default='whole_conversation',
        description='`whole_conversation` (default): one extraction job reads every message; `per_message`: one job per message.',
    )
    infer: Literal['full', 'none'] = Field(
        default='full',
        description='`full` (default): queue extraction (202, or 200 when done within `Prefer: wait=N`); `none`: store the turns '
        'and their passages only (200).',
    )
    labels: list[str] = WRITE_LABELS


class ResolveUncertainty(StrictModel):
    """The value that settles an uncertainty flag."""

    accepted_value: str = Field(
        min_length=1,
        max_length=4096,
        validation_alias=AliasChoices('acceptedValue', 'accepted_value'),
        description="Written as the current value of the flag's entity and key (at the flag's scope), replacing the competing "
        'values, and the flag is marked resolved.',
    )
    note: str | None = Field(default=None, max_length=1024, description='Accepted for compatibility (at most 1024 characters); not stored.')


class SessionCreate(StrictModel):
    """A new session: its id, its default scope, any metadata."""

    id: str | None = Field(
        default=None,
        pattern=SESSION_ID_PATTERN,
        description='The id to use; generated (`sess_<id>`) when absent. An id the caller can already see is 409.',
    )
    scopes: Any = SCOPES
    metadata: dict[str, Any] = Field(default_factory=dict, description='Any JSON object, stored with the session and returned as is.')


class ImportRecords(StrictModel):
    """A batch of an export's lines, in file order: ``startLine`` is the number of the first one in the file."""

    start_line: int = Field(ge=2, le=2**53, validation_alias=AliasChoices('startLine', 'start_line'),
                            description='The line number of the first record in the file (the header is line 1).')  # fmt: skip
    records: list[Any] = Field(min_length=1, max_length=10_000,
                               description='The records, each the JSON object of one line, in file order (1–10,000).')  # fmt: skip


class ContextCreate(StrictModel):
    """A new context: its config override, an optional description, and who its first (admin) principal is."""

    config: dict[str, Any] = Field(
        default_factory=dict,
        description='A partial config, merged over the defaults and validated (400 on a bad field); the sections and defaults are '
        'listed under `ContextView.config`.',
    )
    description: str | None = Field(default=None, max_length=1024, description='Free text about the context (at most 1024 characters).')
    admin_external_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices('admin_external_id', 'adminExternalId'),
        min_length=1,
        max_length=256,
        description="Your own id for the context's `admin` principal.",
    )
    admin_display_name: str | None = Field(
        default=None,
        validation_alias=AliasChoices('admin_display_name', 'adminDisplayName'),
        min_length=1,
        max_length=128,
        description='Display name of the `admin` principal (default `Admin`; not `System`).',
    )

    @field_validator('admin_display_name')
    @classmethod
    def _not_the_system_principal(cls, value: str | None) -> str | None:
        if value is not None and value.strip().lower() == 'system':
            raise ValueError('"System" is the system principal\'s name')
        return not_blank(value)


# ---- management and key lifecycle (CONTRACT §3, §10) ----------------------------------------------
# pydantic checks `pattern` with the Rust engine, where `$` is the end of the text; Python code that reuses
# these must call re.fullmatch (re.match with `$` accepts a trailing newline).
PRINCIPAL_ID_PATTERN = r'^[A-Za-z0-9_.-]{1,64}$'
KEY_NAME_PATTERN = r'^[A-Za-z0-9_.-]{1,64}$'
PrincipalKind = Literal['human', 'agent', 'service']
Grants = dict[str, list[str]]
MAX_TTL_SECONDS = 10 * 365 * 24 * 3600


def not_blank(value: str | None) -> str | None:
    if value is not None and not value.strip():
        raise ValueError('must not be blank')
    return value


class ContextPatch(StrictModel):
    """A change to a context's config."""

    config: dict[str, Any] = Field(
        default_factory=dict,
        description='Deep-merged into the stored config (objects merge key by key, anything else replaces); the result must '
        'validate, else 400 and nothing changes.',
    )


PRINCIPAL_KIND_DOC = 'What it is: `human`, `agent` or `service`.'
DEFAULT_SCOPES_DOC = (
    'Where its writes go when they name no `scopes` (a path, a list of paths, or AND-clauses); it must lie within its `memory:write` grant.'
)


class PrincipalCreate(StrictModel):
    """A new principal; with `externalId` it is create-or-get."""

    id: str | None = Field(
        default=None,
        pattern=PRINCIPAL_ID_PATTERN,
        description='Its id; generated (`p_<id>`) when absent. `admin`, `system` and an id differing only in case from an existing '
        'one are 409.',
    )
    display_name: str = Field(
        validation_alias=AliasChoices('displayName', 'display_name'),
        min_length=1,
        max_length=128,
        description='Its name, unique in the context (409); it names its self entity until the user gives a name.',
    )
    kind: PrincipalKind = Field(description=PRINCIPAL_KIND_DOC)
    grants: Grants | None = Field(
        default=None,
        description='Scope patterns per verb (`memory:read`, `memory:write`, `memory:forget`, `grant:manage`; at most 64 each): '
        '`org/acme` is that node, `org/acme/*` the node and its descendants, `*` the whole context. None: no access.',
    )
    default_scopes: Any = _alias(
        'defaultScopes',
        'default_scopes',
        description=f'{DEFAULT_SCOPES_DOC} Default: the node of its first `memory:write` pattern (`a/b/*` → `a/b`, `*` → `/`).',
    )
    external_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices('externalId', 'external_id'),
        min_length=1,
        max_length=256,
        description='Your own id for it: creating with an `externalId` that exists returns that principal (200) instead.',
    )

    _display_name_not_blank = field_validator('display_name')(not_blank)


class PrincipalPatch(StrictModel):
    """Changes to a principal: a field left out stays, a field sent as null is 400. `system` cannot be changed (403)."""

    display_name: str | None = Field(
        default=None,
        validation_alias=AliasChoices('displayName', 'display_name'),
        min_length=1,
        max_length=128,
        description='A new name, unique in the context (409).',
    )
    kind: PrincipalKind | None = Field(default=None, description=PRINCIPAL_KIND_DOC)
    grants: Grants | None = Field(
        default=None,
        description='Replaces its grants (same shape as on create); its keys narrow at once, since a key never exceeds its principal. '
        'The new `memory:write` must still cover `defaultScopes`, or send those too.',
    )
    default_scopes: Any = _alias('defaultScopes', 'default_scopes', description=DEFAULT_SCOPES_DOC)

    _display_name_not_blank = field_validator('display_name')(not_blank)


class KeyCreate(StrictModel):
    """Management mint body: optional attenuating grants and at most one of ``ttlSeconds`` / ``expiresAt`` (neither: the key
    never expires)."""

    grants: Grants | None = Field(
        default=None,
        description="Narrower grants for the key (within the principal's, else 400); absent: the principal's grants, whatever they become.",
    )
    ttl_seconds: int | None = Field(
        default=None,
        validation_alias=AliasChoices('ttlSeconds', 'ttl_seconds'),
        ge=1,
        le=MAX_TTL_SECONDS,
        description='Lifetime in seconds (at most 10 years); also accepted as the `ttlSeconds` query parameter, but not both.',
    )
    expires_at: dt.datetime | None = _alias(
        'expiresAt', 'expires_at', description='When the key stops working (RFC 3339, in the future, at most 10 years ahead).'
    )

    _parse_expires = field_validator('expires_at', mode='before')(_timestamp)

    @model_validator(mode='after')
    def _one_expiry(self) -> KeyCreate:
        if self.ttl_seconds is not None and self.expires_at is not None:
            raise ValueError('give at most one of ttlSeconds and expiresAt')
        return self


class SelfKeyCreate(KeyCreate):
    """Self-service mint body (``POST /{ctx}/keys``): a name (generated when absent) and optional grants. The new key is never
    more powerful than the calling key: its grants lie within the caller's effective grants and it expires no later."""

    grants: Grants | None = Field(
        default=None,
        description="Narrower grants for the key (within the calling key's effective grants, else 400); absent: the calling key's.",
    )
    name: str | None = Field(
        default=None, pattern=KEY_NAME_PATTERN, description='The key name, unique per principal (409); generated (`k_<hex>`) when absent.'
    )


def _labels_ok(labels: list[str]) -> list[str]:
    for label in labels:
        if '=' not in label or label.startswith('_'):
            raise ValueError('labels are "key=value" strings and keys must not start with "_"')
    return labels


QueryMode = Literal['hybrid', 'vector', 'bm25', 'graph']
IncludeKind = Literal['facts', 'passages']
INCLUDE_ALL: tuple[IncludeKind, ...] = ('facts', 'passages')
MAX_K = 50
MAX_QUERY_CHARS = 4096


def lens_from_scope_sets(value: Any) -> Any:
    """Accept the scope-set shape clients send (``[["team/a"], ["team/b"]]``: an OR of one-path clauses)."""
    if not isinstance(value, list) or not any(isinstance(v, list) for v in value):
        return value
    paths: list[Any] = []
    for clause in value:
        if isinstance(clause, list) and len(clause) != 1:
            raise ValueError('a lens is an OR of scope paths: each clause must hold exactly one path')
        paths.append(clause[0] if isinstance(clause, list) else clause)
    return paths


LENS_SCHEMA: dict[str, Any] = {  # documents every accepted shape: "a,b", ["a", "b"] and scope sets [["a"], ["b"]]
    'anyOf': [{'type': 'string'}, {'type': 'array', 'items': {'anyOf': [{'type': 'string'}, {'type': 'array', 'items': {'type': 'string'},
                                                                       'minItems': 1, 'maxItems': 1}]}}, {'type': 'null'}]
}  # fmt: skip


QUERY_DOC = 'What to look for, in words (not blank).'
K_DOC = 'How many results (1–50, default 10).'


class ReadRequest(StrictModel):
    """What every read route shares: the query, how many results, and the lens/labels narrowing."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description=QUERY_DOC)
    k: int = Field(default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('k', 'limit'), description=K_DOC)
    lens: str | list[str] | None = Field(
        default=None,
        validation_alias=AliasChoices('lens', 'scope'),
        json_schema_extra=LENS_SCHEMA,
        description="Narrow the read to these scope patterns within the caller's `memory:read` grant: a comma-separated string, a "
        'list, or scope sets of one path per clause. A lens outside the grant reads nothing (200, empty), never 403.',
    )
    labels: list[str] = Field(
        default_factory=list,
        max_length=32,
        description='Only passages stamped with every one of these `key=value` labels (facts carry no labels, so none come back).',
    )
    scope_view: Literal['strict', 'merged', 'crossTeam'] = Field(
        default='strict',
        validation_alias=AliasChoices('scopeView', 'scope_view'),
        description='Accepted for compatibility with other clients; every read sees exactly its grant (`strict`).',
    )

    _check_labels = field_validator('labels')(_labels_ok)

    _query_not_blank = field_validator('query')(not_blank)

    _lens = field_validator('lens', mode='before')(lens_from_scope_sets)


class QueryRequest(ReadRequest):
    """Ranked recall: what to look for, how, and which slice of memory (time, session, lens, labels)."""

    mode: QueryMode = Field(
        default='hybrid',
        description='`hybrid` (default): vector, full-text (BM25) and graph lists fused by reciprocal rank, with neighbouring passages '
        'and reranking; `vector`, `bm25` or `graph` alone.',
    )
    include: list[IncludeKind] = Field(
        default_factory=lambda: list(INCLUDE_ALL),
        description='Which hits to return: `facts` (entities, attributes, relations, actions) and/or `passages`; default both. It '
        'narrows the response only: the trace and the reinforcement count every row retrieved.',
    )
    as_of: dt.datetime | None = _alias(
        'asOf',
        'as_of',
        description='Read memory as it stood at this time (RFC 3339): facts known and valid then, superseded and expired ones '
        'included, and passages stored by then.',
    )
    valid_from: dt.datetime | None = _alias(
        'validFrom', 'valid_from', description='Only facts still valid after this time (RFC 3339); with `validUntil`, before it too.'
    )
    valid_until: dt.datetime | None = _alias(
        'validUntil', 'valid_until', description='Only facts already valid before this time (RFC 3339); must be after `validFrom`.'
    )
    session_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices('sessionId', 'session_id'),
        pattern=SESSION_ID_PATTERN,
        description='Only passages of this session and facts extracted from it (404 when the caller cannot see it).',
    )
    source: str | None = Field(default=None, max_length=128, description='Your own label for the read, kept on its trace.')

    _parse_times = field_validator('as_of', 'valid_from', 'valid_until', mode='before')(_timestamp)

    @model_validator(mode='after')
    def _window(self) -> QueryRequest:
        if self.valid_from and self.valid_until and self.valid_from >= self.valid_until:
            raise ValueError('validFrom must be before validUntil')
        return self


class ContextRequest(ReadRequest):
    """A context block for a query: hybrid retrieval over current memory, narrowed by lens and labels."""


class SessionContextRequest(StrictModel):
    """A context block for a session: retrieval for the query (or the session's recent user turns) plus those turns."""

    query: str | None = Field(
        default=None,
        max_length=MAX_QUERY_CHARS,
        description="What to retrieve for; default: the session's recent user turns (their last 1000 characters). Nothing to "
        'retrieve for: the block holds only the recent turns.',
    )
    k: int = Field(default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('k', 'limit'), description=K_DOC)


class ReflectRequest(ReadRequest):
    """A synthesis over fresh retrieval for a query, optionally stored."""

    persist: bool = Field(
        default=False,
        description='Store the reflection as a knowledge-category `reflection` attribute (confidence 0.6) of the entity it is most '
        'about, no more visible than its sources: 403 and nothing written when no scope in the write region can hold it.',
    )


class ChatRequest(StrictModel):
    """A user message for the managed chat loop."""

    message: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description="The user's message (not blank). After the reply it is stored as a user turn, its statements (not its "
        'questions) queued for extraction.',
    )
    session_id: str | None = Field(
        default=None,
        validation_alias=AliasChoices('sessionId', 'session_id'),
        pattern=SESSION_ID_PATTERN,
        description='Continue this session: its recent turns are read, and once it has turns the cache is skipped. Absent: a new session.',
    )
    scopes: Any = SCOPES
    model: str | None = Field(
        default=None,
        min_length=1,
        max_length=128,
        description="The LLM for this call only; such a call neither uses nor seeds the cache. Default: the context's "
        "`models.synthesis`, else the server's.",
    )
    bypass_cache: bool = Field(
        default=False,
        validation_alias=AliasChoices('bypassCache', 'bypass_cache'),
        description='Skip the response cache for this call (the fresh answer may still seed it).',
    )
    labels: list[str] = Field(
        default_factory=list,
        max_length=32,
        description="`key=value` labels: retrieval reads only passages carrying all of them, the stored message's passages get "
        'them, and cached answers are shared only with the same labels.',
    )
    stream: bool = Field(default=False, description='Answer as server-sent events (so does `Accept: text/event-stream`).')
    suppress_markers: bool = Field(
        default=False,
        validation_alias=AliasChoices('suppressMarkers', 'suppress_markers'),
        description='Strip the `[S1]` markers from the reply text; the citations still come back.',
    )

    _check_labels = field_validator('labels')(_labels_ok)

    _message_not_blank = field_validator('message')(not_blank)


class ForgetRequest(StrictModel):
    """Forget the current facts and entities closest in meaning to a query, inside the caller's `memory:forget` region."""

    query: str = Field(
        min_length=1,
        max_length=MAX_QUERY_CHARS,
        description='What to forget, in words: only rows similar enough to it match (a vague query forgets nothing).',
    )
    purge: bool = Field(
        default=False,
        description='Erase the matched facts with their history; default false closes them (`validUntil` = now; history stays).',
    )
    dry_run: bool = Field(
        default=False, validation_alias=AliasChoices('dryRun', 'dry_run'), description='List what would be forgotten and change nothing.'
    )
    limit: int = Field(
        default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('limit', 'k'), description='At most this many rows (1–50, default 10).'
    )

    _query_not_blank = field_validator('query')(not_blank)
