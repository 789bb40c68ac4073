"""Request models: the validated shapes of what callers send (snake_case, camelCase accepted)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.clock import parse_observation, parse_timestamp
from agent_memory.domain.speakers import check_speaker_name
from agent_memory.vocabulary import MemoryCategory, names_self_entity

InferMode = Literal['full', 'triples', 'preview', 'none']
Role = Literal['user', 'assistant', 'system', 'tool']
SESSION_ID_PATTERN = r'^[A-Za-z0-9_.:-]{1,128}$'


def _alias(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class StrictModel(BaseModel):
    # schemas are built on a model's first use, so a cold start pays only for the models its request validates
    model_config = ConfigDict(extra='forbid', populate_by_name=True, str_strip_whitespace=False, defer_build=True)


class EntityRefIn(StrictModel):
    """An entity named in an explicit write (a triple's subject or target)."""

    type: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=256)

    @field_validator('name')
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('name must not be blank')
        if names_self_entity(value):
            raise ValueError("self entities are reserved: only extraction of a principal's own first-person turns writes them")
        return value


class Triple(StrictModel):
    entity: EntityRefIn
    key: str = Field(min_length=1, max_length=128)
    value: str | int | float | bool | None = None
    target: EntityRefIn | None = None
    memory_category: MemoryCategory | None = _alias('memory_category', 'memoryCategory')
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)

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
    description='The speaker, as in the chat-completions message format: first person binds to the person of that name.',
)
# Each triple costs two embeddings (value and entity) and a few statements in the write's one transaction: ~35 ms on
# a busy 2-core host, so 100 keeps one request a few seconds, far from the 29 s API Gateway limit.
MAX_TRIPLES = 100


class FactsRequest(StrictModel):
    text: str | None = None
    infer: InferMode = 'full'
    session_id: str | None = Field(default=None, validation_alias=AliasChoices('session_id', 'sessionId'), pattern=SESSION_ID_PATTERN)
    role: Role = 'user'
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    memory_category: MemoryCategory | None = _alias('memory_category', 'memoryCategory')
    labels: list[str] = Field(default_factory=list, max_length=32)
    triples: list[Triple] = Field(default_factory=list, max_length=MAX_TRIPLES)
    observed_at: dt.datetime | None = _alias('observed_at', 'observedAt')
    addressees: list[str] | None = Field(default=None, max_length=8)
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
    role: Role = 'user'
    content: str = Field(min_length=1)
    ts: dt.datetime | None = None
    addressees: list[str] | None = Field(default=None, max_length=8)
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
    messages: list[BatchMessage] = Field(min_length=1, max_length=100)
    session_id: str | None = Field(default=None, validation_alias=AliasChoices('session_id', 'sessionId'), pattern=SESSION_ID_PATTERN)
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    extract: Literal['whole_conversation', 'per_message'] = 'whole_conversation'
    infer: Literal['full', 'none'] = 'full'
    labels: list[str] = Field(default_factory=list, max_length=32)


class ResolveUncertainty(StrictModel):
    accepted_value: str = Field(min_length=1, max_length=4096, validation_alias=AliasChoices('acceptedValue', 'accepted_value'))
    note: str | None = Field(default=None, max_length=1024)


class SessionCreate(StrictModel):
    id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    metadata: dict[str, Any] = Field(default_factory=dict)


class ImportRecords(StrictModel):
    """A batch of an export's lines, in file order: ``startLine`` is the number of the first one in the file."""

    start_line: int = Field(ge=2, le=2**53, validation_alias=AliasChoices('startLine', 'start_line'))
    records: list[Any] = Field(min_length=1, max_length=10_000)


class ContextCreate(StrictModel):
    """A new context: its config override, an optional description, and who its first (admin) principal is."""

    config: dict[str, Any] = Field(default_factory=dict)
    description: str | None = Field(default=None, max_length=1024)
    admin_external_id: str | None = Field(
        default=None, validation_alias=AliasChoices('admin_external_id', 'adminExternalId'), min_length=1, max_length=256
    )
    admin_display_name: str | None = Field(
        default=None, validation_alias=AliasChoices('admin_display_name', 'adminDisplayName'), min_length=1, max_length=128
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
    config: dict[str, Any] = Field(default_factory=dict)


class PrincipalCreate(StrictModel):
    id: str | None = Field(default=None, pattern=PRINCIPAL_ID_PATTERN)
    display_name: str = Field(validation_alias=AliasChoices('displayName', 'display_name'), min_length=1, max_length=128)
    kind: PrincipalKind
    grants: Grants | None = None
    default_scopes: Any = _alias('defaultScopes', 'default_scopes')
    external_id: str | None = Field(default=None, validation_alias=AliasChoices('externalId', 'external_id'), min_length=1, max_length=256)

    _display_name_not_blank = field_validator('display_name')(not_blank)


class PrincipalPatch(StrictModel):
    display_name: str | None = Field(
        default=None, validation_alias=AliasChoices('displayName', 'display_name'), min_length=1, max_length=128
    )
    kind: PrincipalKind | None = None
    grants: Grants | None = None
    default_scopes: Any = _alias('defaultScopes', 'default_scopes')

    _display_name_not_blank = field_validator('display_name')(not_blank)


class KeyCreate(StrictModel):
    """Management mint body: optional attenuating grants and at most one of ``ttlSeconds`` / ``expiresAt``."""

    grants: Grants | None = None
    ttl_seconds: int | None = Field(default=None, validation_alias=AliasChoices('ttlSeconds', 'ttl_seconds'), ge=1, le=MAX_TTL_SECONDS)
    expires_at: dt.datetime | None = _alias('expiresAt', 'expires_at')

    _parse_expires = field_validator('expires_at', mode='before')(_timestamp)

    @model_validator(mode='after')
    def _one_expiry(self) -> KeyCreate:
        if self.ttl_seconds is not None and self.expires_at is not None:
            raise ValueError('give at most one of ttlSeconds and expiresAt')
        return self


class SelfKeyCreate(KeyCreate):
    """Self-service mint body (``POST /{ctx}/keys``): a name (generated when absent) and optional grants."""

    name: str | None = Field(default=None, pattern=KEY_NAME_PATTERN)


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


class ReadRequest(StrictModel):
    """What every read route shares: the query, how many results, and the lens/labels narrowing."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    k: int = Field(default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('k', 'limit'))
    lens: str | list[str] | None = Field(default=None, validation_alias=AliasChoices('lens', 'scope'), json_schema_extra=LENS_SCHEMA)
    labels: list[str] = Field(default_factory=list, max_length=32)
    scope_view: Literal['strict', 'merged', 'crossTeam'] = Field(default='strict', validation_alias=AliasChoices('scopeView', 'scope_view'))

    _check_labels = field_validator('labels')(_labels_ok)

    _query_not_blank = field_validator('query')(not_blank)

    _lens = field_validator('lens', mode='before')(lens_from_scope_sets)


class QueryRequest(ReadRequest):
    mode: QueryMode = 'hybrid'
    include: list[IncludeKind] = Field(default_factory=lambda: list(INCLUDE_ALL))
    as_of: dt.datetime | None = _alias('asOf', 'as_of')
    valid_from: dt.datetime | None = _alias('validFrom', 'valid_from')
    valid_until: dt.datetime | None = _alias('validUntil', 'valid_until')
    session_id: str | None = Field(default=None, validation_alias=AliasChoices('sessionId', 'session_id'), pattern=SESSION_ID_PATTERN)
    source: str | None = Field(default=None, max_length=128)

    _parse_times = field_validator('as_of', 'valid_from', 'valid_until', mode='before')(_timestamp)

    @model_validator(mode='after')
    def _window(self) -> QueryRequest:
        if self.valid_from and self.valid_until and self.valid_from >= self.valid_until:
            raise ValueError('validFrom must be before validUntil')
        return self


class ContextRequest(ReadRequest):
    pass


class SessionContextRequest(StrictModel):
    query: str | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    k: int = Field(default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('k', 'limit'))


class ReflectRequest(ReadRequest):
    persist: bool = False


class ChatRequest(StrictModel):
    message: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    session_id: str | None = Field(default=None, validation_alias=AliasChoices('sessionId', 'session_id'), pattern=SESSION_ID_PATTERN)
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    model: str | None = Field(default=None, min_length=1, max_length=128)
    bypass_cache: bool = Field(default=False, validation_alias=AliasChoices('bypassCache', 'bypass_cache'))
    labels: list[str] = Field(default_factory=list, max_length=32)
    stream: bool = False
    suppress_markers: bool = Field(default=False, validation_alias=AliasChoices('suppressMarkers', 'suppress_markers'))

    _check_labels = field_validator('labels')(_labels_ok)

    _message_not_blank = field_validator('message')(not_blank)


class ForgetRequest(StrictModel):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    purge: bool = False
    dry_run: bool = Field(default=False, validation_alias=AliasChoices('dryRun', 'dry_run'))
    limit: int = Field(default=10, ge=1, le=MAX_K, validation_alias=AliasChoices('limit', 'k'))

    _query_not_blank = field_validator('query')(not_blank)
