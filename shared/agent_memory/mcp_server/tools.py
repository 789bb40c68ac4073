"""The MCP tools (CONTRACT §11): their argument models and what each one runs in the domain.

Nothing here imports the MCP SDK, so the tool logic is testable on its own; ``server.py`` binds it to the protocol.
Arguments are snake_case, as the reference's tool schemas are; each tool also takes an optional ``context_id``
that must name the key's own context.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from agent_memory.composition import Services
from agent_memory.domain import facts, forget, reads, recall, reflect
from agent_memory.domain.auth import Caller
from agent_memory.domain.facts import check_text_size
from agent_memory.domain.ports import ContextPorts
from agent_memory.domain.scopes import normalise_scope_sets
from agent_memory.errors import BadRequest
from agent_memory.models import (
    LENS_SCHEMA,
    MAX_K,
    MAX_QUERY_CHARS,
    SESSION_ID_PATTERN,
    ContextRequest,
    FactsRequest,
    ForgetRequest,
    QueryMode,
    QueryRequest,
    ReflectRequest,
    lens_from_scope_sets,
    not_blank,
)
from agent_memory.wire_numbers import rounded

REMEMBER_WAIT_SECONDS = 5.0  # MCP tools are synchronous: give queued extraction this long to report what it learned


class ToolArgs(BaseModel):
    model_config = ConfigDict(extra='forbid', populate_by_name=True)

    context_id: str | None = Field(default=None, description="Optional; must be the API key's own context.")

    def request(self) -> BaseModel | None:
        """The REST request model this call amounts to, validated by the same rules as the route (labels, lens,
        text size…); ``None`` for a tool with no body model. A ``ValidationError`` here is a -32602."""
        return None


class QueryArgs(ToolArgs):
    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description='What to look for, in natural language.')

    _query_not_blank = field_validator('query')(not_blank)


class ReadArgs(QueryArgs):
    k: int = Field(default=10, ge=1, le=MAX_K, description=f'How many results (1-{MAX_K}).')
    lens: str | list[str] | None = Field(default=None, description='Scope pattern(s) narrowing the read.', json_schema_extra=LENS_SCHEMA)
    labels: list[str] = Field(default_factory=list, max_length=32, description='key=value labels every passage must carry.')
    scope_view: Literal['strict', 'merged', 'crossTeam'] = 'strict'

    _lens = field_validator('lens', mode='before')(lens_from_scope_sets)

    def read_fields(self) -> dict[str, Any]:
        return {'query': self.query, 'k': self.k, 'lens': self.lens, 'labels': self.labels, 'scope_view': self.scope_view}


class RememberArgs(ToolArgs):
    text: str = Field(min_length=1, description='What to remember: a message, a note or a statement of fact.')
    session_id: str | None = Field(default=None, pattern=SESSION_ID_PATTERN, description='Conversation to append to.')
    scope: Any = Field(default=None, validation_alias=AliasChoices('scope', 'scopes'),
                       description='Where to write: ["/team/x"] or nested DNF (alias scopes); default the principal\'s.')  # fmt: skip
    labels: list[str] = Field(default_factory=list, max_length=32, description='key=value labels for the stored passage.')
    infer: Literal['full', 'preview', 'none'] = Field(
        default='full', description='full: extract facts (queued); preview: extract without storing; none: store text only.'
    )

    _text_not_blank = field_validator('text')(not_blank)

    @field_validator('scope')
    @classmethod
    def _scope_shape(cls, value: Any) -> Any:
        try:
            normalise_scope_sets(value)  # the write path checks the region; the shape is an argument error here
        except BadRequest as exc:
            raise ValueError(exc.detail) from exc
        return value

    def body(self) -> dict[str, Any]:
        return {'text': self.text, 'session_id': self.session_id, 'scopes': self.scope, 'labels': self.labels, 'infer': self.infer}

    def request(self) -> FactsRequest:
        return FactsRequest.model_validate(self.body())


class RecallArgs(ReadArgs):
    mode: QueryMode = 'hybrid'

    def request(self) -> QueryRequest:
        return QueryRequest.model_validate({**self.read_fields(), 'mode': self.mode})


class ContextArgs(ReadArgs):
    def request(self) -> ContextRequest:
        return ContextRequest.model_validate(self.read_fields())


class ReflectArgs(QueryArgs):
    persist: bool = Field(default=False, description='Store the reflection as a knowledge fact.')

    def request(self) -> ReflectRequest:
        return ReflectRequest.model_validate({'query': self.query, 'persist': self.persist})


class ForgetArgs(QueryArgs):
    purge: bool = Field(default=False, description='Erase history too, instead of ending validity (soft).')
    dry_run: bool = Field(default=False, description='Report what would be forgotten, change nothing.')
    k: int = Field(default=10, ge=1, le=MAX_K, description='At most this many facts.')

    def request(self) -> ForgetRequest:
        return ForgetRequest.model_validate({'query': self.query, 'purge': self.purge, 'dry_run': self.dry_run, 'limit': self.k})


class InspectArgs(ToolArgs):
    ref: str = Field(min_length=1, max_length=1024, description='entity:<Type>/<Name>, attribute:<Type>/<Name>/<key> or trace:<id>.')


@dataclass(frozen=True)
class ToolOutput:
    structured: dict[str, Any]
    text: str  # what a client that ignores structured content shows the model


def _json(structured: dict[str, Any]) -> ToolOutput:
    structured = rounded(structured)
    return ToolOutput(structured, json.dumps(structured, separators=(',', ':'), default=str))


def _remember(services: Services, ports: ContextPorts, caller: Caller, args: RememberArgs, request: FactsRequest) -> ToolOutput:
    check_text_size(request.text)
    wait = REMEMBER_WAIT_SECONDS if request.infer == 'full' else 0.0
    _, result = facts.remember(ports.memory, caller, services.pipeline(), request, args.body(), None, wait)
    if result.get('turnId'):
        result = {**result, 'traceId': result['turnId']}  # the reference's stand-in trace id for a write
    return _json(result)


def _recall(services: Services, ports: ContextPorts, caller: Caller, args: RecallArgs, request: QueryRequest) -> ToolOutput:
    return _json(recall.query(ports, services.embedder, caller, request, endpoint='mcp.recall'))


def _context(services: Services, ports: ContextPorts, caller: Caller, args: ContextArgs, request: ContextRequest) -> ToolOutput:
    result = recall.context(ports, services.embedder, caller, request, endpoint='mcp.context')
    return ToolOutput(result, result['context'])


def _reflect(services: Services, ports: ContextPorts, caller: Caller, args: ReflectArgs, request: ReflectRequest) -> ToolOutput:
    return _json(reflect.reflect(ports.memory, services.embedder, services.synthesizer(), services.pipeline(), caller, request))


def _forget(services: Services, ports: ContextPorts, caller: Caller, args: ForgetArgs, request: ForgetRequest) -> ToolOutput:
    return _json(forget.forget(ports.memory, services.embedder, caller, request))


def _inspect(services: Services, ports: ContextPorts, caller: Caller, args: InspectArgs, request: None) -> ToolOutput:
    return _json(reads.inspect(ports, caller, args.ref))


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    args: type[ToolArgs]
    run: Callable[[Services, ContextPorts, Caller, Any, Any], ToolOutput]  # (…, arguments, their REST request)
    read_only: bool
    destructive: bool = False

    def input_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema()


TOOLS: dict[str, Tool] = {
    tool.name: tool
    for tool in (
        Tool(
            'remember',
            'Store text in memory; with infer "full" the facts, instructions and uncertainties in it are '
            'extracted and reconciled (waits up to 5 s for the result, else answers "queued").',
            RememberArgs,
            _remember,
            read_only=False,
        ),  # fmt: skip
        Tool(
            'recall',
            'Ranked facts and passages relevant to a query (fresh retrieval, never the response cache; reinforces what it returns).',
            RecallArgs,
            _recall,
            read_only=True,
        ),  # fmt: skip
        Tool(
            'context',
            'A markdown block for a system prompt: standing instructions, the profile, and the facts and passages relevant to the query.',
            ContextArgs,
            _context,
            read_only=True,
        ),  # fmt: skip
        Tool(
            'reflect',
            'Synthesise an answer to a question from memory, citing its evidence; persist stores it as a fact.',
            ReflectArgs,
            _reflect,
            read_only=False,
        ),  # fmt: skip
        Tool(
            'forget',
            'Forget the facts that match a query (soft by default; purge erases their history).',
            ForgetArgs,
            _forget,
            read_only=False,
            destructive=True,
        ),  # fmt: skip
        Tool(
            'inspect',
            "One entity with its attributes and supersession history, one attribute's history, or one trace.",
            InspectArgs,
            _inspect,
            read_only=True,
        ),  # fmt: skip
    )
}
