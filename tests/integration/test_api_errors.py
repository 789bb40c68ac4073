"""Bad input gets the right 4xx, a problem+json body, and changes nothing in the database."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api

ALICE_PLAN = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'plan', 'value': 'Pro'}

BAD_FACTS: list[tuple[str, Any, int]] = [
    ('malformed json', '{"infer": "triples", ', 400),
    ('not an object', '[1, 2, 3]', 400),
    ('unknown infer', {'infer': 'sometimes', 'text': 'hi'}, 400),
    ('unknown field', {'infer': 'none', 'text': 'hi', 'txet': 'typo'}, 400),
    ('wrong type for text', {'infer': 'none', 'text': 42}, 400),
    ('bad category', {'infer': 'triples', 'memory_category': 'emotion', 'triples': [ALICE_PLAN]}, 400),
    ('bad triple category', {'infer': 'triples', 'triples': [{**ALICE_PLAN, 'memory_category': 'feelings'}]}, 400),
    ('triple with value and target', {'infer': 'triples', 'triples': [{**ALICE_PLAN, 'target': {'type': 'org', 'name': 'X'}}]}, 400),
    ('triple with neither', {'infer': 'triples', 'triples': [{'entity': {'type': 'person', 'name': 'A'}, 'key': 'k'}]}, 400),
    ('triples mode without triples', {'infer': 'triples', 'triples': []}, 400),
    ('more triples than one write takes', {'infer': 'triples', 'triples': [ALICE_PLAN] * 101}, 400),
    ('none mode without text', {'infer': 'none'}, 400),
    ('bad role', {'infer': 'none', 'text': 'hi', 'role': 'narrator'}, 400),
    ('bad observed_at', {'infer': 'none', 'text': 'hi', 'observed_at': 'yesterday'}, 400),
    ('naive observed_at', {'infer': 'none', 'text': 'hi', 'observed_at': '2026-01-01T10:00:00'}, 400),
    ('bad scope path', {'infer': 'none', 'text': 'hi', 'scopes': [['org/../etc']]}, 400),
    ('bad label', {'infer': 'none', 'text': 'hi', 'labels': ['_internal=1']}, 400),
    ('bad session id', {'infer': 'none', 'text': 'hi', 'session_id': 'has spaces'}, 400),
    ('unknown session', {'infer': 'none', 'text': 'hi', 'session_id': 'nope'}, 403),
    ('text over 64 KiB', {'infer': 'none', 'text': 'x' * (64 * 1024 + 1)}, 413),
    ('body over 1 MiB', {'infer': 'none', 'text': 'x', 'labels': ['a=' + 'y' * (1024 * 1024)]}, 413),
    ('preview of nothing', {'infer': 'preview', 'text': '  '}, 400),
]


@pytest.mark.parametrize(('case', 'body', 'status'), BAD_FACTS, ids=[c[0] for c in BAD_FACTS])
def test_bad_facts_are_rejected_and_change_nothing(api: Api, store: MemoryStore, case: str, body: Any, status: int) -> None:
    # Given a context with one fact in it
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [ALICE_PLAN]})[0] == 200
    before = snapshot(store)

    # When a bad request arrives
    code, problem, headers = api.call('facts', 'POST', '/facts', body)

    # Then it is refused with a problem document and the database is unchanged
    assert code == status, problem
    assert headers['Content-Type'] == 'application/problem+json'
    assert problem['status'] == status and problem['message'] == problem['detail'] and problem['title']
    assert problem['instance'] == f'/api/v1/{api.context_id}/facts'
    assert snapshot(store) == before


def test_unknown_key_and_unknown_context_answer_the_same_401(api: Api, store: MemoryStore) -> None:
    # Given a wrong key, an unknown context and a missing key, When each is used, Then all answer the same 401 and
    # nothing changed
    before = snapshot(store)
    wrong_key = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'hi'}, key='am_not-a-key')
    other_context = api.call('facts', 'POST', '/api/v1/no-such-context/facts', {'infer': 'none', 'text': 'hi'})
    missing = api.call('views', 'GET', '/me', headers={'authorization': ''})
    for code, body, _ in (wrong_key, other_context, missing):
        assert code == 401
        assert body['detail'] == wrong_key[1]['detail']
    assert snapshot(store) == before


def test_a_key_of_one_context_is_401_on_another(api: Api, services: Any) -> None:
    # Given a key of another context, When it is used here, Then it is 401
    from agent_memory.domain.contexts import create_context, mint_context_key

    create_context(services.control, services.store, f'{api.context_id}x', {})
    other_key = mint_context_key(services.control, f'{api.context_id}x', 'admin', 'k')
    try:
        code, _, _ = api.call('views', 'GET', '/me', key=other_key)
        assert code == 401
        assert api.call('views', 'GET', f'/api/v1/{api.context_id}x/me', key=other_key)[0] == 200
    finally:
        services.control.delete_context(f'{api.context_id}x')


def test_bad_context_id_is_422(api: Api) -> None:
    # Given a malformed context id in the path, When it is called, Then it is 422 naming the context id
    code, body, _ = api.call('views', 'GET', '/api/v1/bad.context!/me')
    assert code == 422
    assert 'context id' in body['detail']


@pytest.mark.parametrize(
    ('function', 'method', 'path', 'query', 'status'),
    [
        ('entities', 'GET', '/entities', {'limit': '0'}, 400),
        ('entities', 'GET', '/entities', {'limit': '501'}, 400),
        ('entities', 'GET', '/entities', {'cursor': '!!!'}, 400),
        ('entities', 'GET', '/entities/person/nobody', None, 404),
        ('entities', 'GET', '/entities/person/nobody/history/plan', None, 404),
        ('entities', 'DELETE', '/entities/person/nobody', None, 404),
        ('views', 'GET', '/uncertainty', {'resolved': 'maybe'}, 400),
        ('views', 'GET', '/inspect', {'ref': 'banana'}, 400),
        ('views', 'GET', '/inspect', {'ref': 'relation:person/a-[x]->person/b'}, 501),
        ('views', 'GET', '/state', {'limit': 'lots'}, 400),
        ('sessions', 'GET', '/sessions/nope/turns', None, 404),
        ('sessions', 'DELETE', '/sessions/nope', None, 404),
        ('lifecycle', 'POST', '/lifecycle/compact', None, 404),
    ],
)
def test_bad_reads(api: Api, store: MemoryStore, function: str, method: str, path: str, query: dict[str, str] | None, status: int) -> None:
    # Given a malformed or unknown read, When it is sent, Then it gets its status as a problem body and nothing changed
    before = snapshot(store)
    code, body, _ = api.call(function, method, path, query=query)
    assert code == status, body
    assert body['status'] == status
    assert snapshot(store) == before


def test_internal_errors_do_not_leak(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a handler failing with a secret in its exception, When it is called, Then the 500 shows a request id and not
    # the secret
    from agent_memory.db import inspection_reads

    def broken(*_: Any, **__: Any) -> Any:
        raise RuntimeError('secret connection string surrealkv://user:pw@host')

    monkeypatch.setattr(inspection_reads.InspectionReads, 'list_entities', broken)
    code, body, _ = api.call('entities', 'GET', '/entities')
    assert code == 500
    assert 'secret' not in body['detail'] and 'request id' in body['detail']


def test_full_without_a_queue_is_503_and_stores_nothing(
    api: Api, store: MemoryStore, services: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given no extraction queue configured, When a full write arrives, Then it is a 503 naming the queue and nothing
    # changed
    monkeypatch.setattr(services, 'queue', None)
    before = snapshot(store)
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': 'I moved to Berlin'})
    assert code == 503 and 'queue' in body['detail']
    assert snapshot(store) == before


def test_a_body_that_is_not_utf8_is_400_not_500(api: Api) -> None:
    # Given a body that is not UTF-8, When it reaches a handler, Then it is a 400 saying so
    import base64

    from local_runtime.events import LocalContext, http_event
    from tests.support.handlers import load_function

    event = http_event('POST', f'/api/v1/{api.context_id}/context', body=b')\xff\xfeY%', headers={'authorization': f'Bearer {api.key}'})
    assert event['isBase64Encoded'] is True and base64.b64decode(event['body']) == b')\xff\xfeY%'
    result = load_function('retrieval').lambda_handler(event, LocalContext())
    assert result['statusCode'] == 400 and 'UTF-8' in result['body']
