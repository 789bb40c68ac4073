"""Hostile input is a 400 that changes nothing, never a 500 (issue 12, hole 10).

Covers every integer query parameter (`limit`, `offset`/`cursor`, `windowHours`, `ttlSeconds`), numbers the
database cannot hold, documents nested too deep, non-JSON constants, out-of-range timestamps and per-context
config values that would overflow a duration later.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.composition import Services
from tests.support.db_snapshot import snapshot
from tests.support.handlers import MANAGEMENT_KEY, Api

HOSTILE_INTS = ['²', '٣', '1_0', ' 5', '-1', str(2**63), str(10**30), '9' * 5000]
MGMT = Api('unused', MANAGEMENT_KEY)


# ------------------------------------------------------------------ query parameters
GETS = [
    ('views', '/state', 'limit'),
    ('views', '/uncertainty', 'limit'),
    ('entities', '/entities', 'limit'),
    ('traces', '/traces', 'limit'),
    ('traces', '/traces/stats', 'windowHours'),
    ('sessions', '/sessions/s1/turns', 'limit'),
    ('sessions', '/sessions/s1/turns', 'offset'),
    ('sessions', '/sessions/s1/turns', 'cursor'),
]


@pytest.mark.parametrize(('function', 'path', 'param'), GETS)
def test_every_integer_query_parameter_refuses_hostile_values(api: Api, function: str, path: str, param: str) -> None:
    # Given an integer query parameter, When it carries hostile digits, signs or huge numbers, Then each is a 400, while
    # a plain 1 is served
    assert api.call('sessions', 'POST', '/sessions', {'id': 's1'})[0] == 201
    for value in HOSTILE_INTS:
        code, body, _ = api.call(function, 'GET', path, query={param: value})
        assert code == 400, (param, value, body)
    assert api.call(function, 'GET', path, query={param: '1'})[0] == 200


def test_ttl_seconds_refuses_hostile_values_and_mints_nothing(services: Services, api: Api) -> None:
    # Given key-minting routes, When ttlSeconds is hostile, Then each is a 400 and nothing changed
    before = snapshot(services.store(api.context_id))
    for value in HOSTILE_INTS:
        code, body, _ = api.call('keys', 'POST', '/keys', {'name': 'k1'}, query={'ttlSeconds': value})
        assert code == 400, (value, body)
        path = f'/api/v1/contexts/{api.context_id}/principals/admin/keys/k2'
        code, body, _ = MGMT.call('contexts', 'POST', path, query={'ttlSeconds': value})
        assert code == 400, (value, body)
    assert snapshot(services.store(api.context_id)) == before


# ------------------------------------------------------------------ bodies
def nested(depth: int) -> str:
    return '{"a":' * depth + '1' + '}' * depth


BAD_SESSION_BODIES = [
    {'id': 's2', 'metadata': {'n': 2**63}},
    {'id': 's2', 'metadata': {'n': -(2**63) - 1}},
    {'id': 's2', 'metadata': {'n': 10**30}},
    {'id': 's2', 'metadata': {'list': [1, 2, [10**30]]}},
    '{"id": "s2", "metadata": {"n": NaN}}',
    '{"id": "s2", "metadata": {"n": Infinity}}',
    '{"id": "s2", "metadata": {"a": "\\ud800"}}',  # a lone surrogate: valid JSON escape, not UTF-8
    '{"id": "s2", "metadata": {"\\udfff": 1}}',
    '{"id": "s2", "metadata": ' + nested(200) + '}',
    '{"id": "s2", "metadata": ' + '[' * 100_000 + ']' * 100_000 + '}',
]


@pytest.mark.parametrize('body', BAD_SESSION_BODIES, ids=range(len(BAD_SESSION_BODIES)))
def test_session_bodies_the_database_cannot_hold_are_400_and_write_nothing(services: Services, api: Api, body: Any) -> None:
    # Given a session body the database cannot hold, When it is posted, Then it is a 400 and nothing changed
    before = snapshot(services.store(api.context_id))
    code, problem, _ = api.call('sessions', 'POST', '/sessions', body)
    assert code == 400, problem
    assert snapshot(services.store(api.context_id)) == before


def test_the_largest_accepted_values_are_stored_and_read_back(services: Services, api: Api) -> None:
    # Given metadata at the largest accepted integers and nesting, When it is stored and read, Then it comes back
    # unchanged
    metadata = {'max': 2**63 - 1, 'min': -(2**63), 'deep': json.loads(nested(30))}
    code, body, _ = api.call('sessions', 'POST', '/sessions', {'id': 's3', 'metadata': metadata})
    assert code == 201, body
    assert body['metadata'] == metadata
    stored = services.store(api.context_id).sessions_named('nobody/s3', 's3')
    assert [s.metadata for s in stored] == [metadata]


@pytest.mark.parametrize('raw', [nested(100_000), '[' * 100_000 + ']' * 100_000])
def test_a_100k_deep_document_is_400_on_every_body_route(services: Services, api: Api, raw: str) -> None:
    # Given a document nested 100,000 deep, When it is sent to every body route, Then each is a 400 and nothing changed
    before = snapshot(services.store(api.context_id))
    for function, path in (('facts', '/facts'), ('facts', '/facts/batch'), ('retrieval', '/query'), ('chat', '/chat')):
        code, body, _ = api.call(function, 'POST', path, raw)
        assert code == 400, (path, body)
    code, body, _ = MGMT.call('contexts', 'PATCH', f'/api/v1/contexts/{api.context_id}', raw)
    assert code == 400, body
    assert snapshot(services.store(api.context_id)) == before


@pytest.mark.parametrize(
    'body',
    [
        '{"text": "hi \\ud800 there", "infer": "none"}',
        '{"infer": "triples", "triples": [{"entity": {"type": "person", "name": "Ada"}, "key": "k", "value": "\\ud800"}]}',
    ],
)
def test_text_with_a_lone_surrogate_is_400_and_writes_nothing(services: Services, api: Api, body: str) -> None:
    # Given text with a lone surrogate, When it is written, Then it is a 400 and nothing changed
    before = snapshot(services.store(api.context_id))
    code, problem, _ = api.call('facts', 'POST', '/facts', body)
    assert code == 400, problem
    assert snapshot(services.store(api.context_id)) == before


@pytest.mark.parametrize('stamp', ['0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00'])
def test_a_timestamp_with_no_utc_equivalent_is_400(services: Services, api: Api, stamp: str) -> None:
    # Given a timestamp with no UTC equivalent, When it is sent as observed_at or a key expiry, Then it is a 400 and
    # nothing changed
    before = snapshot(services.store(api.context_id))
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': 'hello', 'infer': 'none', 'observed_at': stamp})
    assert code == 400, body
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'hello', 'asOf': stamp})
    assert code == 400, body
    assert snapshot(services.store(api.context_id)) == before


# ------------------------------------------------------------------ per-context config
BAD_CONFIGS = [
    {'response_cache': {'freshness_window_seconds': 10**15}},
    {'lifecycle': {'context_ttl_days': 1e308}},
    {'lifecycle': {'context_ttl_days': 10**9}},
    {'trace_retention': {'retrieval_trace_days': 10**9}},
    {'trace_retention': {'decision_trace_days': 10**7}},
    {'rate_limit': {'requests_per_minute': 10**18}},
    {'rate_limit': {'burst': 10**18}},
]


@pytest.mark.parametrize('config', BAD_CONFIGS, ids=[next(iter(next(iter(c.values())))) for c in BAD_CONFIGS])
def test_config_values_that_overflow_are_400_and_change_nothing(services: Services, api: Api, config: dict[str, Any]) -> None:
    # Given a config value that would overflow later, When a context is patched or created with it, Then it is a 400 and
    # nothing changed
    path = f'/api/v1/contexts/{api.context_id}'
    before = MGMT.call('contexts', 'GET', path)[1]
    code, body, _ = MGMT.call('contexts', 'PATCH', path, {'config': config})
    assert code == 400, body
    assert MGMT.call('contexts', 'GET', path)[1] == before
    code, body, _ = MGMT.call('contexts', 'POST', f'{path}x', {'config': config})
    assert code == 400, body
    assert MGMT.call('contexts', 'GET', f'{path}x')[0] == 404


def test_the_largest_accepted_config_keeps_chat_and_sweeps_working(api: Api) -> None:
    # Given the largest accepted config values, When facts are written, chat asked and sweeps run, Then all still work
    from agent_memory.domain.context_config import MAX_DAYS, MAX_FRESHNESS_SECONDS, MAX_RATE

    config = {
        'response_cache': {'freshness_window_seconds': MAX_FRESHNESS_SECONDS},
        'lifecycle': {'context_ttl_days': MAX_DAYS},
        'trace_retention': {'decision_trace_days': MAX_DAYS, 'retrieval_trace_days': MAX_DAYS, 'response_trace_days': MAX_DAYS},
        'rate_limit': {'requests_per_minute': MAX_RATE, 'burst': MAX_RATE},
    }
    code, body, _ = MGMT.call('contexts', 'PATCH', f'/api/v1/contexts/{api.context_id}', {'config': config})
    assert code == 200, body
    triple = {'entity': {'type': 'person', 'name': 'Ada'}, 'key': 'city', 'value': 'Paris'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    replies = []
    for _ in range(2):  # the second one consults the cache with the widest freshness window
        code, body, _ = api.call('chat', 'POST', '/chat', {'message': 'Where does Ada live?'})
        assert code == 200, body
        replies.append(body)
    assert 'Paris' in replies[0]['reply'] and [r['cached'] for r in replies] == [False, True], replies
    for sweep in ('expire', 'purge-traces', 'decay'):
        code, body, _ = api.call('lifecycle', 'POST', f'/lifecycle/{sweep}')
        assert code == 200, (sweep, body)
        assert isinstance(body['affected'], int), (sweep, body)
    # and the widest TTL and retention expired nothing
    code, body, _ = api.call('entities', 'GET', '/entities/person/ada')
    assert code == 200 and ('city', 'Paris') in {(a['key'], a['value']) for a in body['attributes']}, body
