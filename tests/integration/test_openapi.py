"""The OpenAPI document: generated from the code, committed, valid, complete, served, and faithful to the models."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from openapi_spec_validator import validate

from local_runtime.events import http_event
from openapi.generate import OUTPUT, render, template_routes
from tests.support import conformance
from tests.support.handlers import ROOT, Api

DOCUMENT: dict[str, Any] = json.loads(OUTPUT.read_text(encoding='utf-8'))


def test_committed_document_matches_the_code() -> None:
    # Given the committed infra/openapi/openapi.json, When the generator renders it from the code, Then the two are
    # identical
    assert OUTPUT.read_text(encoding='utf-8') == render(), 'infra/openapi/openapi.json is stale: run make openapi'


def test_document_is_valid_openapi_3_1() -> None:
    # Given the document, When it is validated, Then it is valid OpenAPI 3.1
    assert DOCUMENT['openapi'] == '3.1.0'
    validate(DOCUMENT)


def test_every_template_route_is_documented_and_nothing_else() -> None:
    # Given the template's routes, When the document's operations are listed, Then the two sets are equal
    declared = {(method.lower(), path) for method, path, _ in template_routes()}
    documented = {(method, path) for path, operations in DOCUMENT['paths'].items() for method in operations}
    assert documented == declared


def test_request_schemas_are_the_models_the_handlers_validate_with() -> None:
    # Given the document, When request schemas and responses are read, Then they are the handlers' models with their
    # limits, enums and statuses
    chat = DOCUMENT['paths']['/api/v1/{context_id}/chat']['post']
    assert chat['requestBody']['content']['application/json']['schema'] == {'$ref': '#/components/schemas/ChatRequest'}
    query = DOCUMENT['components']['schemas']['QueryRequest']
    assert query['properties']['k']['maximum'] == 50 and query['additionalProperties'] is False
    assert set(query['properties']['mode']['enum']) == {'hybrid', 'vector', 'bm25', 'graph'}
    traces = DOCUMENT['paths']['/api/v1/{context_id}/traces']['get']['parameters']
    assert [(p['name'], p['in'], p['required']) for p in traces] == [
        ('context_id', 'path', True), ('cursor', 'query', False), ('limit', 'query', False), ('lens', 'query', False),
    ]  # fmt: skip
    assert '(default 50)' in traces[2]['description']  # the route's own page size, not the shared default
    assert set(DOCUMENT['paths']['/api/v1/{context_id}/facts']['post']['responses']) >= {'200', '202', '400', '401', '413'}
    assert DOCUMENT['paths']['/api/v1/health']['get']['security'] == []


def _schema(ref: dict[str, Any]) -> dict[str, Any]:
    """A documented schema (a components reference, or inline as /mcp's is) with the components it refers to."""
    schema = DOCUMENT['components']['schemas'][ref['$ref'].rsplit('/', 1)[1]] if '$ref' in ref else ref
    return {**schema, 'components': DOCUMENT['components']}


def _resolvable(schema: dict[str, Any]) -> dict[str, Any]:
    """JSON Schema whose #/components refs resolve inside itself."""
    return json.loads(json.dumps(schema))


def _events_with_bodies() -> list[str]:
    events = sorted((ROOT / 'tests' / 'events').glob('*.json'))
    return [p.name for p in events if (e := json.loads(p.read_text(encoding='utf-8'))).get('routeKey') and e.get('body')]


@pytest.mark.parametrize('event_file', _events_with_bodies())
def test_sample_request_bodies_conform_to_the_documented_schema(event_file: str) -> None:
    # Given a sample event with a body, When the body is validated against the documented schema, Then it conforms
    event = json.loads((ROOT / 'tests' / 'events' / event_file).read_text(encoding='utf-8'))
    method, path = event['routeKey'].split(' ', 1)
    operation = DOCUMENT['paths'][path][method.lower()]
    assert 'requestBody' in operation, f'{event_file}: a body is sent but none is documented'
    schema = _resolvable(_schema(operation['requestBody']['content']['application/json']['schema']))
    jsonschema.validate(json.loads(event['body']), schema)


@pytest.mark.parametrize('bad', [{'query': 'x', 'k': 51}, {'query': 'x', 'lens': [['a', 'b']]}], ids=['k-over-50', 'and-clause-lens'])
def test_documented_schema_rejects_what_the_api_rejects(api: Api, bad: dict[str, Any]) -> None:
    # Given a body the API refuses, When validated against the documented schema and sent to the API, Then both reject
    # it
    schema = _resolvable(_schema({'$ref': '#/components/schemas/QueryRequest'}))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)
    assert api.call('retrieval', 'POST', '/query', bad)[0] == 400


def test_two_spellings_of_one_field_are_documented_as_a_400_and_are_one(api: Api) -> None:
    # Given both spellings of one field, When the description is read and the body sent, Then the document says so and
    # the API answers 400
    description = DOCUMENT['components']['schemas']['QueryRequest']['description']
    assert '`k` or `limit`' in description and '`sessionId` or `session_id`' in description and '(both is a 400)' in description
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'x', 'k': 5, 'limit': 5})
    assert code == 400 and 'limit' in body['detail']


def test_documented_schema_accepts_every_spelling_the_api_accepts(api: Api) -> None:
    # Given each accepted spelling, When validated against the schema and sent, Then both accept it
    schema = _resolvable(_schema({'$ref': '#/components/schemas/QueryRequest'}))
    for good in ({'query': 'x', 'limit': 5, 'scopeView': 'strict'}, {'query': 'x', 'k': 5, 'scope_view': 'strict'},
                 {'query': 'x', 'lens': 'a,b'}, {'query': 'x', 'lens': ['a', 'b']}, {'query': 'x', 'lens': [['a'], ['b']]}):  # fmt: skip
        jsonschema.validate(good, schema)
        assert api.call('retrieval', 'POST', '/query', good)[0] == 200, good


def test_document_is_served_without_auth(api: Api) -> None:
    # Given no valid key, When /openapi.json is fetched, Then the committed document is served as JSON
    code, body, headers = api.call('health', 'GET', '/api/v1/openapi.json', key='not-a-key')
    assert code == 200 and body == DOCUMENT and headers['Content-Type'] == 'application/json'


def test_the_layer_ships_the_committed_document() -> None:
    # Given the shared layer, When its copy of the document is resolved, Then it is the committed file itself
    shipped = ROOT / 'shared' / 'agent_memory' / 'api' / 'openapi.json'
    assert shipped.resolve() == Path(OUTPUT).resolve()


def test_success_bodies_are_documented_by_their_response_models() -> None:
    # Given the generated document
    operations = {(m.upper(), p): op for p, ops in DOCUMENT['paths'].items() for m, op in ops.items()}
    # Then success bodies reference response models (not a bare {type}), arrays are arrays of a model
    query = operations['POST', '/api/v1/{context_id}/query']['responses']['200']['content']['application/json']['schema']
    assert query == {'$ref': '#/components/schemas/QueryResult'}
    hit = DOCUMENT['components']['schemas']['Hit']
    assert hit['additionalProperties'] is False and {'id', 'score', 'source', 'text'} <= set(hit['required'])
    principals = operations['GET', '/api/v1/contexts/{context_id}/principals']['responses']['200']['content']['application/json']
    assert principals['schema'] == {'type': 'array', 'items': {'$ref': '#/components/schemas/PrincipalView'}}
    # And a 204 has no body, a 202 the same model as the 200
    assert 'content' not in operations['DELETE', '/api/v1/{context_id}/sessions/{session_id}']['responses']['204']
    facts = operations['POST', '/api/v1/{context_id}/facts']['responses']
    assert facts['202']['content'] == facts['200']['content']


def test_each_operation_lists_only_the_statuses_it_can_answer() -> None:
    # Given the generated document, When each operation's statuses are read, Then they are only the ones it can answer
    statuses = {(m.upper(), p): set(op['responses']) for p, ops in DOCUMENT['paths'].items() for m, op in ops.items()}
    assert statuses['GET', '/api/v1/{context_id}/me'] == {'200', '400', '401', '403', '422', '429', '503'}
    assert statuses['GET', '/api/v1/contexts'] == {'200', '401', '429', '503'}  # the management key's rate limit (issue 30)
    assert statuses['GET', '/api/v1/health'] == {'200', '503'}
    assert statuses['POST', '/api/v1/{context_id}/facts'] == {'200', '202', '400', '401', '403', '404', '409', '413', '422', '429', '503'}
    assert '501' in statuses['GET', '/api/v1/{context_id}/inspect'] and '501' not in statuses['GET', '/api/v1/{context_id}/state']


def test_the_document_does_not_depend_on_handler_source_text(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given handler source that cannot be read (the old generator scraped it for decorators and "# also answers" comments)
    real_read_text = Path.read_text

    def no_handler_source(path: Path, *args: Any, **kwargs: Any) -> str:
        assert 'functions' not in path.parts, f'the generator read {path}'
        return real_read_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, 'read_text', no_handler_source)
    # When the document is rendered, Then it is the committed one
    assert render() == OUTPUT.read_text(encoding='utf-8')


def test_the_conformance_check_refuses_an_undocumented_status_and_a_body_off_its_model() -> None:
    # Given the check every test response goes through
    event = http_event('GET', '/api/v1/ctx/me')
    me = {'contextId': 'ctx', 'principalId': 'p', 'displayName': 'P', 'kind': 'agent', 'grants': {}, 'tokenGrants': None,
          'effectiveGrants': {}, 'delegatedPrincipalId': None}  # fmt: skip
    ok = {'statusCode': 200, 'headers': {'Content-Type': 'application/json'}, 'body': json.dumps(me)}
    conformance.check(event, ok)
    # Then a status /me cannot answer, a missing field and an undocumented field are each refused
    for result in ({**ok, 'statusCode': 404}, {**ok, 'body': json.dumps({k: v for k, v in me.items() if k != 'kind'})},
                   {**ok, 'body': json.dumps({**me, 'secret': 'x'})}):  # fmt: skip
        with pytest.raises(AssertionError):
            conformance.check(event, result)
