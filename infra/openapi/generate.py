"""Generate the OpenAPI 3.1 document from the code: the operations of ``agent_memory.api.routes`` and their models.

Each operation (the object its handler registers its route with) gives the path, method, request model, query
parameters and every status it answers, with the model of each body; template.yaml must wire exactly these routes
to the functions the operations name. ``make openapi`` rewrites ``infra/openapi/openapi.json``; a test fails when
the committed document and the code disagree. The health function serves it at ``GET /api/v1/openapi.json``.

Run: ``PYTHONPATH=shared:infra .venv/bin/python -m openapi.generate [--check]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel, TypeAdapter

from agent_memory import models
from agent_memory.api import responses
from agent_memory.api.routes import ERRORS, JSON, OPERATIONS, PROBLEM_JSON, Answer, Operation
from local_runtime.template_routes import http_routes, load_template

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / 'infra' / 'openapi' / 'openapi.json'
REF = '#/components/schemas/{model}'
SSE = 'text/event-stream'
DESCRIPTION = (
    'Memory layer for AI agents: facts, retrieval, chat with a semantic response cache, lifecycle.\n\n'
    'Agents send conversation turns and explicit facts; the service extracts entities, attributes, relations, actions, '
    'instructions and uncertainties, reconciles them with what it holds (a new value supersedes, nothing is overwritten '
    'blindly), and serves ranked recall, prompt-ready context blocks, profiles, state snapshots and chat answers. Every '
    'read and write leaves a trace.\n\n'
    "Data-plane routes live under `/api/v1/{context_id}/…` (a context is a tenant) and take that context's keys; the "
    'management routes under `/api/v1/contexts` take the management key. A key of a principal with `grant:manage` may act '
    'for another principal with the `X-Memory-On-Behalf-Of: <principal id>` header. Request bodies accept snake_case or '
    'camelCase field names; responses are camelCase, timestamps RFC 3339 in UTC. Errors are `application/problem+json` '
    '(`Problem`); 429 and 503 carry `Retry-After`.'
)
BEARER = {
    'type': 'http',
    'scheme': 'bearer',
    'description': '`Authorization: Bearer <key>`: a context key (shown once when minted; `make dev` prints one for the `dev` '
    "context) or, for `/api/v1/contexts…`, the management key. Missing, unknown, expired or another context's key: 401.",
}


def template_routes() -> list[tuple[str, str, str]]:
    """(method, path, function folder) of every HttpApi event in template.yaml."""
    routes = http_routes(load_template(ROOT / 'template.yaml'), ROOT)
    return sorted(((r.method, r.path, r.code_dir.name) for r in routes), key=lambda r: (r[1], r[0]))


def routed_operations() -> list[Operation]:
    """The operations, in document order, after checking that template.yaml wires exactly these to their functions."""
    declared = {(method, path): folder for method, path, folder in template_routes()}
    defined = {(op.method, op.path): op for op in OPERATIONS}
    problems = [f'{m} {p} is in template.yaml but no operation in agent_memory.api.routes defines it' for m, p in declared.keys() - defined]
    problems += [f'{m} {p} is an operation but template.yaml does not route it' for m, p in defined.keys() - declared]
    problems += [f'{op.method} {op.path}: template.yaml sends it to functions/{declared[key]}, the operation to functions/{op.function}'
                 for key, op in defined.items() if key in declared and declared[key] != op.function]  # fmt: skip
    if problems:
        raise SystemExit('\n'.join(problems))
    return sorted(OPERATIONS, key=lambda op: (op.path, op.method))


class Components:
    """The shared schemas, each model under its class name; two different schemas under one name is an error."""

    def __init__(self) -> None:
        self.schemas: dict[str, Any] = {}

    def add(self, name: str, schema: dict[str, Any]) -> None:
        if self.schemas.setdefault(name, schema) != schema:
            raise SystemExit(f'two different models are both named {name!r}: rename one')

    def schema_of(self, body: Any) -> dict[str, Any]:
        """A reference to a model's schema (or an inline one for ``list[Model]``), its nested models registered."""
        schema = TypeAdapter(body).json_schema(ref_template=REF)
        for name, definition in schema.pop('$defs', {}).items():
            nested = getattr(models, name, None)  # a request model's nested models take both spellings too
            self.add(name, _with_aliases(nested, definition) if isinstance(nested, type) and issubclass(nested, BaseModel) else definition)
        if isinstance(body, type) and issubclass(body, BaseModel):
            self.add(body.__name__, _with_aliases(body, schema))
            return {'$ref': REF.format(model=body.__name__)}
        return schema


def _with_aliases(model: type[BaseModel], schema: dict[str, Any]) -> dict[str, Any]:
    """Request models accept every spelling of a field (``sessionId`` or ``session_id``, ``k`` or ``limit``): document
    them all, and say that a body may use only one spelling of each. That rule is prose, not ``not: {required}``
    pairs: schemathesis cannot generate bodies from a schema with several of those."""
    properties = schema.get('properties', {})
    exclusive: list[str] = []
    for field in model.model_fields.values():
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            names = [str(choice) for choice in alias.choices]
            documented = next((properties[n] for n in names if n in properties), None)
            if documented is not None:
                for name in names:
                    properties.setdefault(name, documented)
                exclusive.append(' or '.join(f'`{n}`' for n in names))
    if exclusive:
        rule = f'One spelling per field in a body: {"; ".join(exclusive)} (both is a 400).'
        schema['description'] = f'{schema["description"]}\n\n{rule}' if schema.get('description') else rule
    return schema


def _answer(answer: Answer, components: Components) -> dict[str, Any]:
    if answer.body is None and answer.schema is None:
        return {'description': answer.description}
    schema = dict(answer.schema) if answer.schema is not None else components.schema_of(_response_model(answer))
    content = {}
    for media in answer.media:
        if media == SSE:  # the same answer as server-sent events (API Gateway buffers them: the frames arrive together)
            content[media] = {'schema': {'type': 'string', 'description': "frames: each event's data is a JSON object"}}
        else:
            content[media] = {'schema': schema}
    return {'description': answer.description, 'content': content}


def _response_model(answer: Answer) -> Any:
    model = getattr(responses, answer.body or '', None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SystemExit(f'{answer.body!r} is not a model in agent_memory.api.responses')
    return list[model] if answer.array else model  # type: ignore[valid-type]


def _request(request: str | Mapping[str, Any], components: Components) -> dict[str, Any]:
    if isinstance(request, Mapping):
        return {'required': True, 'content': {JSON: {'schema': dict(request)}}}
    model = getattr(models, request, None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise SystemExit(f'{request!r} is not a model in agent_memory.models')
    return {'required': False, 'content': {JSON: {'schema': components.schema_of(model)}}}


def _parameter(op: Operation, name: str, where: str) -> dict[str, Any]:
    try:
        description = op.parameter(name)
    except KeyError:
        raise SystemExit(f'{op.method} {op.path}: describe the parameter {name!r} (Operation.parameters or routes.PARAMETERS)') from None
    return {'name': name, 'in': where, 'required': where == 'path', 'description': description, 'schema': {'type': 'string'}}


def _operation(op: Operation, components: Components) -> dict[str, Any]:
    problem = {'content': {PROBLEM_JSON: {'schema': {'$ref': REF.format(model='Problem')}}}}
    answers = {
        str(status): _answer(op.answers[status], components) if status in op.answers else {'description': ERRORS[status], **problem}
        for status in sorted(op.statuses)
    }
    query = [*op.query, 'lens'] if op.reads_lens else list(op.query)
    document: dict[str, Any] = {
        'operationId': f'{op.function}_{op.name}',
        'summary': op.summary,
        'description': op.description,
        'tags': [op.function],
        'parameters': [_parameter(op, name, 'path') for name in re.findall(r'{(\w+)}', op.path)]
        + [_parameter(op, name, 'query') for name in query],
        'responses': answers,
    }
    if not document['parameters']:
        del document['parameters']
    if op.request is not None:
        document['requestBody'] = _request(op.request, components)
    if op.public:
        document['security'] = []
    return document


def build() -> dict[str, Any]:
    components = Components()
    components.schema_of(responses.Problem)
    paths: dict[str, dict[str, Any]] = {}
    for op in routed_operations():
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, components)
    return {
        'openapi': '3.1.0',
        'info': {'title': 'Agent Memory', 'version': '1.0.0', 'description': DESCRIPTION},
        'servers': [{'url': '/'}],
        'security': [{'bearerAuth': []}],
        'components': {'securitySchemes': {'bearerAuth': BEARER}, 'schemas': components.schemas},
        'paths': paths,
    }


def render() -> str:
    return json.dumps(build(), indent=2, sort_keys=True, ensure_ascii=False) + '\n'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--check', action='store_true', help='exit 1 when the committed document is out of date')
    args = parser.parse_args()
    text = render()
    if args.check:
        if OUTPUT.read_text(encoding='utf-8') != text:
            print(f'{OUTPUT} is out of date: run make openapi', file=sys.stderr)
            sys.exit(1)
        return
    OUTPUT.write_text(text, encoding='utf-8')
    print(f'wrote {OUTPUT} ({len(json.loads(text)["paths"])} paths)')


if __name__ == '__main__':
    main()
