"""Session ids reveal nothing and cannot be squatted (issue 12, hole 12; CONTRACT §3, docs/architecture.md "Sessions").

Each principal's session ids live in its own namespace; a session another principal can read is shared, one it cannot
read is as good as absent: creating the same id succeeds, and nothing in any answer tells the two cases apart.
"""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.principals import make_principal


@pytest.fixture
def teams(services: Services, context_id: str) -> tuple[Api, Api]:
    def team(pid: str, region: str) -> Api:
        verbs = {'memory:read': [f'{region}/*', 'shared/*'], 'memory:write': [f'{region}/*', 'shared/*']}
        return make_principal(services, context_id, pid, verbs, region)

    return team('alice', 'team/a'), team('bob', 'team/b')


def create(api: Api, session_id: str, scopes: str | None = None) -> int:
    body = {'id': session_id} | ({'scopes': scopes} if scopes else {})
    return api.call('sessions', 'POST', '/sessions', body)[0]


def say(api: Api, session_id: str, text: str) -> int:
    return api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text, 'session_id': session_id})[0]


def turns(api: Api, session_id: str) -> list[str]:
    code, body, _ = api.call('sessions', 'GET', f'/sessions/{session_id}/turns')
    return [t['content'] for t in body['turns']] if code == 200 else []


def test_an_id_used_outside_the_callers_region_is_no_oracle_and_cannot_be_squatted(teams: tuple[Api, Api]) -> None:
    # Given Alice and Bob in separate regions, When each creates and writes sessions with the same ids, Then neither
    # learns of nor blocks the other's, and each keeps its own turns
    alice, bob = teams
    assert create(bob, 'planning') == 201  # Bob squats the id Alice is about to use
    assert create(alice, 'planning') == 201
    code, body, _ = alice.call('sessions', 'POST', '/sessions', {'id': 'standup'})
    assert code == 201 and body['id'] == 'standup'
    assert create(alice, 'standup') == 409  # her own: the usual duplicate
    assert create(bob, 'standup') == 201  # exists for Alice only: no 409 oracle
    assert say(alice, 'planning', 'A: roadmap') == say(bob, 'planning', 'B: hiring') == 200
    assert turns(alice, 'planning') == ['A: roadmap'] and turns(bob, 'planning') == ['B: hiring']


def test_reads_and_closes_reach_only_the_callers_session(teams: tuple[Api, Api]) -> None:
    # Given Alice's session, When Bob reads, closes or writes to it, Then he gets the same answers as for a session that
    # never existed and hers stays open
    alice, bob = teams
    assert create(alice, 'retro') == 201 and say(alice, 'retro', 'A: private') == 200
    assert bob.call('sessions', 'GET', '/sessions/retro/turns')[0] == 404  # same as a session that never existed
    assert bob.call('sessions', 'DELETE', '/sessions/retro')[0] == 404
    assert say(bob, 'retro', 'B: hello') == 403 == say(bob, 'never-created', 'B: hello')
    assert say(alice, 'retro', 'A: still open') == 200


def test_a_session_the_caller_can_read_is_shared_not_shadowed(teams: tuple[Api, Api]) -> None:
    # Given a session in a shared scope, When Bob creates the same id and both write, Then it is 409 for him and both
    # write to the one shared session
    alice, bob = teams
    assert create(alice, 'all-hands', scopes='shared/all') == 201
    assert create(bob, 'all-hands') == 409  # he can see it, so saying so reveals nothing
    assert say(bob, 'all-hands', 'B: joined') == 200 and say(alice, 'all-hands', 'A: welcome') == 200
    assert turns(alice, 'all-hands') == turns(bob, 'all-hands') == ['B: joined', 'A: welcome']
    code, body, _ = bob.call('retrieval', 'POST', '/query', {'query': 'joined welcome', 'sessionId': 'all-hands', 'k': 10})
    assert code == 200 and {h['resource']['sessionId'] for h in body['hits']} == {'all-hands'}
