"""Database round trips per route (issue 12: a hosted database charges each one; reads ≤ 3, writes ≤ 2).

Each ``Database.query`` call is one round trip (one RPC frame over ws), so the test counts calls through a wrapper
on the process-wide Database while a route runs through its handler against the real engine. A second call is
counted: the first warms per-process state (migrations checked once per context database).
bench/remote_db.py measures the same counts over ws, with latency.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.domain.auth import hash_key, mint_token
from agent_memory.rows.control import KeyRecord
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.mcp_rpc import rpc
from tests.support.principals import make_principal

TRIPLE = {'entity': {'type': 'person', 'name': 'Ada'}, 'key': 'plan', 'value': 'sail'}


class Counter:
    def __init__(self) -> None:
        self.calls = 0


@pytest.fixture
def trips(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter]:
    counter, query = Counter(), services.db.query

    def counted(*args: Any, **kwargs: Any) -> list[Any]:
        counter.calls += 1
        return query(*args, **kwargs)

    monkeypatch.setattr(services.db, 'query', counted)
    yield counter


def counted_call(trips: Counter, call: Callable[[], tuple[int, Any, Any]]) -> int:
    """Round trips of the second of two identical calls (both must succeed)."""
    status, body, _ = call()
    assert status < 300, body
    before = trips.calls
    status, body, _ = call()
    assert status < 300, body
    return trips.calls - before


@pytest.fixture
def seeded(api: Api) -> Api:
    """A session, and an entity with an attribute and a relation, to read."""
    assert api.call('sessions', 'POST', '/sessions', {'id': 's1'})[0] == 201
    relation = {'entity': {'type': 'person', 'name': 'Ada'}, 'key': 'works_with', 'target': {'type': 'person', 'name': 'Bob'}}
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'sessionId': 's1', 'triples': [TRIPLE, relation]})
    assert code == 200, body
    return api


# (function, method, path, body, ceiling): the ceiling is the target unless noted
ROUTES = [
    ('views', 'GET', '/me', None, 1),  # authentication alone: key, context, principal and rate-limit token together
    ('views', 'GET', '/state', None, 2),
    ('views', 'GET', '/profile', None, 3),  # self facts, categories and instructions together; then the display names
    ('entities', 'GET', '/entities/person/Ada', None, 2),
    ('sessions', 'GET', '/sessions/s1/turns', None, 2),  # the session is read with authentication
    ('facts', 'POST', '/facts', {'infer': 'none', 'text': 'a note', 'sessionId': 's1'}, 2),
    ('facts', 'POST', '/facts', {'infer': 'triples', 'sessionId': 's1', 'triples': [TRIPLE]}, 5),  # target 2: reconciler reads not folded
    # target 3: what changed for the process's local search, the lists, their expansion, the trace with reinforcement
    ('retrieval', 'POST', '/query', {'query': 'Who does Ada work with?'}, 5),
    ('retrieval', 'POST', '/context', {'query': 'Who does Ada work with?'}, 6),  # and the prompt's instructions and self facts
]


@pytest.mark.parametrize(('function', 'method', 'path', 'body', 'ceiling'), ROUTES, ids=[f'{r[1]} {r[2]} {r[4]}' for r in ROUTES])
def test_route_round_trips_stay_within_target(trips: Counter, seeded: Api, function: str, method: str, path: str, body: Any,
                                              ceiling: int) -> None:  # fmt: skip
    # Given a seeded context, When a route is called, Then it makes no more database round trips than its ceiling
    assert counted_call(trips, lambda: seeded.call(function, method, path, body)) <= ceiling


def test_delegated_and_throttled_authentication_is_one_round_trip(services: Services, context_id: str, trips: Counter,
                                                                  api: Api) -> None:  # fmt: skip
    # Given a context with a rate limit and a principal the admin may act for
    services.control.db.query('control', 'UPDATE type::record("context", $id) SET config = $cfg;',
                              {'id': context_id, 'cfg': {'rate_limit': {'requests_per_minute': 600, 'burst': 50}}})  # fmt: skip
    make_principal(services, context_id, 'bob', {'memory:read': ['team/b/*']}, 'team/b')
    # When the admin reads /me on behalf of bob
    calls = counted_call(trips, lambda: api.call('views', 'GET', '/me', headers={'X-Memory-On-Behalf-Of': 'bob'}))
    # Then key, context, both principals and the token took one round trip, and the answer is bob's
    assert calls == 1
    assert api.call('views', 'GET', '/me', headers={'X-Memory-On-Behalf-Of': 'bob'})[1]['delegatedPrincipalId'] == 'bob'


def test_an_mcp_request_authenticates_in_two_round_trips(trips: Counter, api: Api) -> None:
    # Given an MCP request (no context in the path), When it authenticates, Then it takes at most two round trips
    rpc(api.key, 'tools/list')
    before = trips.calls
    rpc(api.key, 'tools/list')
    assert trips.calls - before <= 2  # the key's context first (no context in the path), then the rest in one


def test_a_delegated_write_lands_in_the_delegated_principals_session(services: Services, context_id: str, api: Api) -> None:
    # Given the admin's session "x" inside bob's write region (but not readable by bob), then bob's own "x"
    bob = make_principal(services, context_id, 'bob', {'memory:read': ['team/b/bob'], 'memory:write': ['team/b/*']}, 'team/b/bob')
    assert api.call('sessions', 'POST', '/sessions', {'id': 'x', 'scopes': [['team/b/admin']]})[0] == 201
    assert bob.call('sessions', 'POST', '/sessions', {'id': 'x', 'scopes': [['team/b/bob']]})[0] == 201
    # When the admin writes into session "x" on behalf of bob (the session is read with authentication)
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'for bob', 'sessionId': 'x'},
                             headers={'X-Memory-On-Behalf-Of': 'bob'})  # fmt: skip
    assert code == 200, body
    # Then the turn is in bob's "x", not the admin's
    code, turns, _ = bob.call('sessions', 'GET', '/sessions/x/turns')
    assert code == 200, turns
    assert [t['content'] for t in turns['turns']] == ['for bob']
    assert api.call('sessions', 'GET', '/sessions/x/turns')[1]['turns'] == []


def test_refused_keys_take_no_token_from_the_principals_bucket(services: Services, context_id: str, api: Api) -> None:
    # Given a bucket holding one token, and a key of the same principal that has expired
    services.control.db.query('control', 'UPDATE type::record("context", $id) SET config = $cfg;',
                              {'id': context_id, 'cfg': {'rate_limit': {'requests_per_minute': 1, 'burst': 1}}})  # fmt: skip
    expired = mint_token()
    services.control.put_key(KeyRecord(context_id, 'admin', 'old', hash_key(expired), None, utcnow() - dt.timedelta(seconds=1)), utcnow())
    # When unknown and expired keys are refused
    assert [api.call('views', 'GET', '/me', key=k)[0] for k in ('am_unknown', expired, expired)] == [401, 401, 401]
    # Then the principal's token is still there (the authentication round trip took it only for a valid key)
    assert [api.call('views', 'GET', '/me')[0] for _ in range(2)] == [200, 429]


@pytest.mark.parametrize('field', ['sessionId', 'session_id'])
def test_an_empty_session_id_read_with_authentication_is_a_400_not_a_500(api: Api, services: Services, field: str) -> None:
    # Given a body naming the empty session id (found by the fuzzer: the auth lookup built a record id from it)
    before = snapshot(services.store(api.context_id))
    # When it is written, Then it is refused as bad input and nothing is stored
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'hello', field: ''})
    assert code == 400, body
    assert snapshot(services.store(api.context_id)) == before
