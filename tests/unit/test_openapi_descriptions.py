"""The API reference is readable (issue 32): every operation, parameter, schema and field of the OpenAPI document says
what it is. The committed document is walked (a test in tests/integration/test_openapi.py keeps it equal to the code)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from openapi.generate import OUTPUT

DOCUMENT: dict[str, Any] = json.loads(OUTPUT.read_text(encoding='utf-8'))
PLACEHOLDERS = {'todo', 'tbd', 'fixme', 'xxx', 'description', 'n/a', 'none', 'null', 'value', 'field', 'success', 'ok'}
FILLER = {'the', 'a', 'an', 'of', 'its', 'this'}


def words(text: str) -> list[str]:
    """Lowercase words of a text or an identifier (``sessionId`` and ``session_id`` are both ``session id``)."""
    return re.findall(r'[a-z0-9]+', re.sub(r'(?<=[a-z0-9])(?=[A-Z])', ' ', text).lower())


def problem(where: str, description: Any, name: str | None = None) -> str | None:
    """Why a description does not describe, or None when it does."""
    if not isinstance(description, str) or not description.strip():
        return f'{where}: no description'
    said = words(description)
    if description.strip().strip('.').lower() in PLACEHOLDERS or len(said) < 3:
        return f'{where}: a placeholder, not a description: {description!r}'
    if name is not None and [w for w in said if w not in FILLER] == words(name):
        return f'{where}: only repeats the name: {description!r}'
    return None


def schema_problems(where: str, schema: Any) -> Iterator[str | None]:
    """Every property of a schema and of the schemas nested in it (arrays, unions, maps), wherever it is inlined."""
    if not isinstance(schema, dict):
        return
    for name, field in (schema.get('properties') or {}).items():
        yield problem(f'{where}.{name}', field.get('description'), name)
        yield from schema_problems(f'{where}.{name}', field)
    for key in ('items', 'additionalProperties', 'not'):
        yield from schema_problems(where, schema.get(key))
    for key in ('anyOf', 'oneOf', 'allOf'):
        for option in schema.get(key) or []:
            yield from schema_problems(where, option)


def document_problems(document: dict[str, Any]) -> list[str]:
    found: list[str | None] = [problem('info', document['info'].get('description'))]
    for name, schema in document['components']['schemas'].items():
        found.append(problem(f'schema {name}', schema.get('description'), name))
        found.extend(schema_problems(name, schema))
    for path, operations in document['paths'].items():
        for method, operation in operations.items():
            where = f'{method.upper()} {path}'
            found.append(problem(f'{where} summary', operation.get('summary')))
            found.append(problem(f'{where} description', operation.get('description')))
            if operation.get('description') == operation.get('summary'):
                found.append(f'{where}: the description only repeats the summary')
            for parameter in operation.get('parameters', []):
                found.append(problem(f'{where} parameter {parameter["name"]}', parameter.get('description'), parameter['name']))
            for media in (operation.get('requestBody') or {}).get('content', {}).values():
                found.extend(schema_problems(f'{where} body', media.get('schema')))
            for status, answer in operation['responses'].items():
                for media in answer.get('content', {}).values():
                    found.extend(schema_problems(f'{where} {status}', media.get('schema')))
    return [p for p in found if p is not None]


def test_every_operation_parameter_schema_and_field_is_described() -> None:
    # Given the committed OpenAPI document, When every operation, parameter, schema and property is walked, Then each has
    # a description that says more than its name
    assert document_problems(DOCUMENT) == []


def test_the_document_covers_what_was_undescribed_before() -> None:
    # Given the document, When the walk counts what it checked, Then it saw every operation and several hundred fields
    operations = [op for ops in DOCUMENT['paths'].values() for op in ops.values()]
    fields = [p for name, schema in DOCUMENT['components']['schemas'].items() for p in schema_problems(name, schema)]
    assert len(operations) >= 49 and len(fields) >= 450


@pytest.mark.parametrize(
    ('description', 'name', 'refused'),
    [
        (None, 'sessionId', True),
        ('', 'sessionId', True),
        ('TODO', 'sessionId', True),
        ('Session id.', 'sessionId', True),
        ('The session id', 'session_id', True),
        ('Value', 'value', True),
        ('The session the turn went to (created when the request named none).', 'sessionId', False),
    ],
)
def test_a_missing_or_placeholder_description_is_refused(description: Any, name: str, refused: bool) -> None:
    # Given a field described as given, When it is checked, Then only a real description passes
    assert (problem('f', description, name) is not None) is refused


def test_the_walk_reaches_nested_inline_and_parameter_descriptions() -> None:
    # Given a document whose only gaps are a nested array item's field, an operation description and a parameter
    described = {'description': 'An example field, for the walk.'}
    document = {
        'info': {'description': 'A small document for this test.'},
        'components': {'schemas': {'Outer': {'description': 'An outer model for the walk.', 'properties': {
            'rows': {**described, 'type': 'array', 'items': {'properties': {'bare': {'type': 'string'}}}}}}}},
        'paths': {'/x': {'get': {'summary': 'Read x for the test', 'parameters': [{'name': 'limit', 'in': 'query'}],
                                 'responses': {'200': {'description': 'Fine', 'content': {'application/json': {'schema': {
                                     'anyOf': [{'properties': {'inline': {'type': 'string'}}}]}}}}}}}},
    }  # fmt: skip
    # When it is walked, Then each gap is reported
    found = document_problems(document)
    assert [f.split(':')[0] for f in found] == ['Outer.rows.bare', 'GET /x description', 'GET /x parameter limit', 'GET /x 200.inline']
