"""Generate the OpenAPI 3.1 document from the code: template.yaml routes, the handlers and the pydantic models.

Each HttpApi route of ``template.yaml`` becomes an operation. Its handler in ``functions/<name>/app.py``
says which request model it validates with (``parse_body(app, Model)``), which query parameters it
reads (``query_param(app, 'x')``) and which success statuses it returns; the request schemas are the
models' own JSON schemas. ``make openapi`` rewrites ``infra/openapi/openapi.json``; a test fails when the
committed document and the code disagree. The health function serves it at ``GET /api/v1/openapi.json``.

Run: ``PYTHONPATH=shared:infra .venv/bin/python -m openapi.generate [--check]``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic import AliasChoices, BaseModel

from agent_memory import models
from local_runtime.template_routes import load_template

ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / 'infra' / 'openapi' / 'openapi.json'
_DECORATOR = re.compile(r"""@app\.(get|post|put|patch|delete)\(\s*['"]([^'"]+)['"]\)""")
_BODY = re.compile(r'parse_body\(app, (\w+)\)')
_QUERY = re.compile(r"""query_param\(app, ['"](\w+)['"]\)""")
_STATUS = re.compile(r'json_response\(.*?, ([^#\n]+)\)|return (\d{3}),|also answers (\d{3})')
PROBLEM = 'application/problem+json'
PUBLIC = {('GET', '/api/v1/health'), ('GET', '/api/v1/openapi.json')}
ERRORS = {
    '400': 'Malformed JSON, an invalid field, enum or limit',
    '401': 'Missing, unknown, expired or rotated key',
    '403': 'Outside the caller’s grants',
    '404': 'No such resource (or not visible to the caller)',
    '409': 'Duplicate or idempotency conflict',
    '413': 'Body over the size limit',
    '422': 'Invalid context id or semantic error',
    '429': 'Rate limited (see Retry-After)',
    '503': 'Database or model provider unavailable (see Retry-After)',
}


MCP_FOLDER = 'mcp'  # /mcp speaks JSON-RPC through the MCP SDK: described here, not inferred from the handler
_JSON = 'application/json'


def _mcp_operation(method: str) -> dict[str, Any]:
    def answer(description: str, *media: str) -> dict[str, Any]:
        return {'description': description, **({'content': {m: {'schema': {}} for m in media}} if media else {})}

    problem = {'$ref': '#/components/schemas/Problem'}
    if method != 'POST':
        return {
            'operationId': f'mcp_{method.lower()}',
            'tags': ['mcp'],
            'description': 'Stateless server: no server-initiated stream and no session to end.',
            'responses': {'405': answer('Use POST', _JSON), '401': {'description': ERRORS['401'],
                                                                    'content': {PROBLEM: {'schema': problem}}},
                          '429': {'description': ERRORS['429'], 'content': {PROBLEM: {'schema': problem}}}},
        }  # fmt: skip
    message = {
        'type': 'object',
        'description': 'A JSON-RPC 2.0 request or notification of the MCP Streamable HTTP transport (stateless, JSON '
        'answers): tools/list, tools/call (remember, recall, context, reflect, forget, inspect), initialize, ping.',
        'required': ['jsonrpc', 'method'],
        'properties': {'jsonrpc': {'const': '2.0'}, 'id': {'type': ['string', 'integer']}, 'method': {'type': 'string'},
                       'params': {'type': 'object'}},
    }  # fmt: skip
    return {
        'operationId': 'mcp_post',
        'tags': ['mcp'],
        'requestBody': {'required': True, 'content': {_JSON: {'schema': message}}},
        'responses': {
            '200': answer('A JSON-RPC response: a result, or an error (-32602 invalid params, -32601 unknown method/tool)', _JSON),
            '202': answer('Notification accepted (no body)'),
            '400': answer('Not JSON, not a JSON-RPC message, or (2026-07-28 protocol) a malformed envelope', _JSON, 'text/plain'),
            '401': {'description': ERRORS['401'], 'content': {PROBLEM: {'schema': problem}}},
            '404': answer('2026-07-28 protocol (Mcp-Protocol-Version header): an unknown method or tool, as a JSON-RPC error', _JSON),
            '406': answer('The Accept header excludes application/json', _JSON),
            '413': answer(ERRORS['413'], 'text/plain'),
            '429': {'description': f'{ERRORS["429"]}: every MCP request takes a token', 'content': {PROBLEM: {'schema': problem}}},
        },
    }


def template_routes() -> list[tuple[str, str, str]]:
    """(method, path, function folder) of every HttpApi event."""
    template = load_template(ROOT / 'template.yaml')
    routes = []
    for resource in template['Resources'].values():
        if resource['Type'] != 'AWS::Serverless::Function':
            continue
        folder = resource['Properties']['CodeUri'].strip('/').split('/')[-1]
        for event in (resource['Properties'].get('Events') or {}).values():
            if event['Type'] == 'HttpApi':
                routes.append((event['Properties']['Method'].upper(), event['Properties']['Path'], folder))
    return sorted(routes, key=lambda r: (r[1], r[0]))


def _handler_facts(folder: str) -> dict[tuple[str, str], dict[str, Any]]:
    """Per decorated route of one handler module: request model, query parameters, statuses, docstring line."""
    source = (ROOT / 'functions' / folder / 'app.py').read_text(encoding='utf-8')
    found: dict[tuple[str, str], dict[str, Any]] = {}
    matches = list(_DECORATOR.finditer(source))
    for i, match in enumerate(matches):
        body = source[match.end() : matches[i + 1].start() if i + 1 < len(matches) else len(source)]
        path = re.sub(r'<(\w+)>', r'{\1}', match.group(2))
        statuses = {int(n) for groups in _STATUS.findall(body) for n in re.findall(r'\b[1-5]\d\d\b', ' '.join(groups))}
        if 'no_content()' in body:
            statuses.add(204)
        if any(_single_argument(call) for call in re.findall(r'json_response\((.*)\)', body)):
            statuses.add(200)  # json_response(body) answers 200
        model = _BODY.search(body)
        name = re.search(r'def (\w+)\(', body)
        found[(match.group(1).upper(), path)] = {
            'model': model.group(1) if model else None,
            'query': sorted(set(_QUERY.findall(body))),
            'statuses': sorted(statuses) or [200],
            'operation': name.group(1) if name else None,
            'array': 'responds with an array' in body,
            'sse': 'sse_response(' in body,
        }
    return found


def _with_aliases(model: type[BaseModel], schema: dict[str, Any]) -> dict[str, Any]:
    """The handlers accept every spelling of a field (``sessionId`` or ``session_id``, ``k`` or ``limit``): document
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


def _single_argument(arguments: str) -> bool:
    """True when a call's argument text has no comma outside brackets (only the body, default status)."""
    depth = 0
    for char in arguments:
        depth += char in '([{'
        depth -= char in ')]}'
        if char == ',' and depth == 0:
            return False
    return True


def _schema_for(model_name: str, components: dict[str, Any]) -> dict[str, Any]:
    model = getattr(models, model_name)
    assert isinstance(model, type) and issubclass(model, BaseModel), model_name
    schema = model.model_json_schema(ref_template='#/components/schemas/{model}')
    for name, definition in schema.pop('$defs', {}).items():
        nested = getattr(models, name, None)
        components[name] = _with_aliases(nested, definition) if isinstance(nested, type) and issubclass(nested, BaseModel) else definition
    components[model_name] = _with_aliases(model, schema)
    return {'$ref': f'#/components/schemas/{model_name}'}


def build() -> dict[str, Any]:
    components: dict[str, Any] = {
        'Problem': {
            'type': 'object',
            'description': 'RFC 7807 problem details (application/problem+json); `message` repeats `detail`.',
            'properties': {k: {'type': t} for k, t in (('type', 'string'), ('title', 'string'), ('status', 'integer'),
                                                        ('detail', 'string'), ('instance', 'string'), ('message', 'string'))},
            'required': ['type', 'title', 'status', 'detail', 'message'],
        }
    }  # fmt: skip
    paths: dict[str, dict[str, Any]] = {}
    facts_by_folder: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
    for method, path, folder in template_routes():
        if folder == MCP_FOLDER:
            paths.setdefault(path, {})[method.lower()] = _mcp_operation(method)
            continue
        handler = facts_by_folder.setdefault(folder, _handler_facts(folder)).get((method, path))
        if handler is None:
            raise SystemExit(f'{method} {path} is declared in template.yaml but functions/{folder}/app.py does not route it')
        kind = 'array' if handler['array'] else 'object'
        operation: dict[str, Any] = {
            'operationId': f'{folder}_{handler["operation"]}',
            'tags': [folder],
            'parameters': [
                {'name': name, 'in': 'path', 'required': True, 'schema': {'type': 'string'}} for name in re.findall(r'{(\w+)}', path)
            ]
            + [{'name': name, 'in': 'query', 'required': False, 'schema': {'type': 'string'}} for name in handler['query']],
            'responses': {
                str(status): {'description': 'No content' if status == 204 else 'Success',
                              **({} if status == 204 else {'content': {'application/json': {'schema': {'type': kind}}}})}
                for status in handler['statuses']
            },
        }  # fmt: skip
        if handler['sse']:  # `stream: true` or `Accept: text/event-stream`: the same answer as server-sent events
            frames = "each event's data: {delta, traceId, sessionId}, the last {done: true, …}"
            events = {'schema': {'type': 'object', 'description': frames}}
            operation['responses']['200']['content']['text/event-stream'] = events
        if handler['model']:
            schema = _schema_for(handler['model'], components)
            operation['requestBody'] = {'required': False, 'content': {'application/json': {'schema': schema}}}
        for status, description in ERRORS.items():
            operation['responses'].setdefault(
                status,
                {'description': description, 'content': {PROBLEM: {'schema': {'$ref': '#/components/schemas/Problem'}}}},
            )
        if (method, path) in PUBLIC:
            operation['security'] = []
        paths.setdefault(path, {})[method.lower()] = operation
    return {
        'openapi': '3.1.0',
        'info': {
            'title': 'Agent Memory',
            'version': '1.0.0',
            'description': 'Memory layer for AI agents: facts, retrieval, chat with a semantic response cache, lifecycle.',
        },
        'servers': [{'url': '/'}],
        'security': [{'bearerAuth': []}],
        'components': {'securitySchemes': {'bearerAuth': {'type': 'http', 'scheme': 'bearer'}}, 'schemas': components},
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
