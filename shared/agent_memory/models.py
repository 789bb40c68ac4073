"""Request models: the validated shapes of what callers send (snake_case, camelCase accepted)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_memory.domain.ids import parse_rfc3339
from agent_memory.domain.vocabulary import MemoryCategory

InferMode = Literal['full', 'triples', 'preview', 'none']
Role = Literal['user', 'assistant', 'system', 'tool']
SESSION_ID_PATTERN = r'^[A-Za-z0-9_.:-]{1,128}$'


def _alias(*names: str) -> Any:
    return Field(default=None, validation_alias=AliasChoices(*names))


class StrictModel(BaseModel):
    model_config = ConfigDict(extra='forbid', populate_by_name=True, str_strip_whitespace=False)


class EntityRefIn(StrictModel):
    type: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=256)

    @field_validator('name')
    @classmethod
    def _name_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError('name must not be blank')
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


def _observed(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError('must be an RFC 3339 timestamp string')
    return parse_rfc3339(value)


class FactsRequest(StrictModel):
    text: str | None = None
    infer: InferMode = 'full'
    session_id: str | None = Field(default=None, validation_alias=AliasChoices('session_id', 'sessionId'), pattern=SESSION_ID_PATTERN)
    role: Role = 'user'
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    memory_category: MemoryCategory | None = _alias('memory_category', 'memoryCategory')
    labels: list[str] = Field(default_factory=list, max_length=32)
    triples: list[Triple] = Field(default_factory=list, max_length=500)
    observed_at: dt.datetime | None = _alias('observed_at', 'observedAt')
    addressees: list[str] | None = Field(default=None, max_length=8)

    _parse_observed = field_validator('observed_at', mode='before')(_observed)

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


class SessionCreate(StrictModel):
    id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN)
    scopes: Any = Field(default=None, validation_alias=AliasChoices('scopes', 'scope'))
    metadata: dict[str, Any] = Field(default_factory=dict)


class ContextCreate(StrictModel):
    config: dict[str, Any] = Field(default_factory=dict)
