"""Isolation between principals: every read route returns exactly what each caller may see (CONTRACT §3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.auth import hash_key, mint_token
from agent_memory.domain.visibility import fingerprint
from agent_memory.rows.control import KeyRecord
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.worker import Worker

ORG, ALICE, BOB = 'org/acme', 'org/acme/user/alice', 'org/acme/user/bob'


@dataclass
class World:
    admin: Api
    reader: Api
    alice: Api
    bob: Api
    alice_session: str


def fact(name: str, key: str, value: str, scope: str, admin: Api, **extra: Any) -> None:
    body = {
        'infer': 'triples',
        'scopes': [[scope]],
        'triples': [{'entity': {'type': 'person', 'name': name}, 'key': key, 'value': value, **extra}],
    }
    code, response, _ = admin.call('facts', 'POST', '/facts', body)
    assert code == 200, response


@pytest.fixture
def world(services: Any, context_id: str, api: Api, store: MemoryStore, worker: Worker) -> World:
    reader = make_principal(services, context_id, 'reader', {'memory:read': [ORG]}, ORG)
    alice = make_principal(services, context_id, 'alice', {'memory:read': [ORG, f'{ALICE}/*'], 'memory:write': [f'{ALICE}/*']}, ALICE)
    bob = make_principal(services, context_id, 'bob', {'memory:read': [ORG, f'{BOB}/*'], 'memory:write': [f'{BOB}/*']}, BOB)
    fact('Carol', 'policy', 'remote-first', ORG, api)
    fact('Alice', 'diagnosis', 'asthma', ALICE, api)
    fact('Alice', 'diagnosis', 'flu', ALICE, api, confidence=0.4)  # below the floor → an uncertainty in Alice's scope
    fact('Bob', 'salary', '100k', BOB, api)
    assert api.call('facts', 'POST', '/facts', {'text': 'Always answer in French.', 'scopes': [[ALICE]]})[0] == 202
    worker.drain()  # stage 0 stores the instruction in Alice's scope
    code, turn, _ = alice.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'my secret plan'})
    assert code == 200
    return World(api, reader, alice, bob, turn['sessionId'])


def values(api: Api) -> dict[str, Any]:
    """Everything a caller can see, route by route."""
    _, entities, _ = api.call('entities', 'GET', '/entities')
    _, state, _ = api.call('views', 'GET', '/state')
    _, profile, _ = api.call('views', 'GET', '/profile')
    _, uncertainty, _ = api.call('views', 'GET', '/uncertainty')
    return {
        'entities': sorted(e['name'] for e in entities['entities']),
        'state': sorted(a['value'] for section in ('identity', 'knowledge', 'context') for a in state[section]['attributes']),
        'profile': sorted(p['value'] for part in ('static', 'dynamic', 'preferences', 'selfFacts') for p in profile[part]),
        'instructions': [i['description'] for i in state['instructions']] + [i['description'] for i in profile['instructions']],
        'unknowns': [u['about'] for u in state['unknowns']] + [u['about'] for u in uncertainty['uncertainties']],
        'alice_entity': api.call('entities', 'GET', '/entities/person/alice')[0],
        'alice_history': api.call('entities', 'GET', '/entities/person/alice/history/diagnosis')[0],
        'alice_inspect': api.call('views', 'GET', '/inspect', query={'ref': 'attribute:person/alice/diagnosis'})[0],
        'bob_entity': api.call('entities', 'GET', '/entities/person/bob')[0],
    }


def test_each_principal_sees_exactly_its_region(world: World) -> None:
    # Given facts in org, Alice's and Bob's regions, When each principal reads every view, Then each sees exactly its
    # own region's values
    assert values(world.reader) == {
        'entities': ['Carol'], 'state': ['remote-first'], 'profile': ['remote-first'], 'instructions': [], 'unknowns': [],
        'alice_entity': 404, 'alice_history': 404, 'alice_inspect': 404, 'bob_entity': 404,
    }  # fmt: skip
    assert values(world.alice) == {
        'entities': ['Alice', 'Carol'], 'state': ['asthma', 'flu', 'remote-first'], 'profile': ['asthma', 'flu', 'remote-first'],
        'instructions': ['Always answer in French'] * 2, 'unknowns': ['entity:person/alice diagnosis'] * 2,
        'alice_entity': 200, 'alice_history': 200, 'alice_inspect': 200, 'bob_entity': 404,
    }  # fmt: skip
    assert values(world.bob) == {
        'entities': ['Bob', 'Carol'], 'state': ['100k', 'remote-first'], 'profile': ['100k', 'remote-first'], 'instructions': [],
        'unknowns': [], 'alice_entity': 404, 'alice_history': 404, 'alice_inspect': 404, 'bob_entity': 200,
    }  # fmt: skip


def test_bob_cannot_read_or_append_to_alices_session(world: World) -> None:
    # Given Alice's session, When Bob reads it or writes to it, Then he is refused exactly as for a session that does
    # not exist
    assert world.bob.call('sessions', 'GET', f'/sessions/{world.alice_session}/turns')[0] == 404
    assert world.alice.call('sessions', 'GET', f'/sessions/{world.alice_session}/turns')[0] == 200
    out_of_region = world.bob.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'x', 'session_id': world.alice_session})
    absent = world.bob.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'x', 'session_id': 'no-such-session'})
    assert out_of_region[0] == absent[0] == 403 and out_of_region[1]['detail'] == absent[1]['detail']


def test_writes_outside_the_write_region_are_403_and_change_nothing(world: World, store: MemoryStore) -> None:
    # Given Bob and a read-only principal, When they write outside their write region, Then each is 403 and nothing
    # changed; a write without scopes lands in Bob's own region
    before = snapshot(store)
    body = {'infer': 'triples', 'scopes': [[ALICE]], 'triples': [{'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'x', 'value': 'y'}]}
    assert world.bob.call('facts', 'POST', '/facts', body)[0] == 403
    assert world.reader.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'hi'})[0] == 403
    assert snapshot(store) == before
    # a write without scopes lands in the caller's default region, visible to its owner only
    assert world.bob.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [body['triples'][0] | {'key': 'nickname'}]})[0] == 200
    assert 'y' not in values(world.alice)['state'] and 'y' in values(world.bob)['state']


def test_lens_narrows_within_the_grant_and_never_widens(world: World) -> None:
    # Given Alice's grant, When she reads with a lens inside it, outside it and malformed, Then it narrows, is empty,
    # and is 400
    org_only = world.alice.call('views', 'GET', '/state', query={'lens': ORG})[1]
    assert [a['value'] for a in org_only['knowledge']['attributes']] == ['remote-first']
    code, foreign, _ = world.alice.call('entities', 'GET', '/entities', query={'lens': f'{BOB}/*'})
    assert code == 200 and foreign['entities'] == []  # out-of-grant lens: empty, never 403
    assert world.alice.call('entities', 'GET', '/entities', query={'lens': 'bad path!'})[0] == 400


def test_delegation_needs_grant_manage_and_stays_inside_the_managers_region(world: World, services: Any, context_id: str) -> None:
    # Given delegation headers, When callers without grant:manage, with it over the region and over another region act
    # for Alice, Then only the first manager sees her facts
    header = {'X-Memory-On-Behalf-Of': 'alice'}
    assert world.bob.call('views', 'GET', '/state', headers=header)[0] == 403
    manager = make_principal(services, context_id, 'manager', {'memory:read': [ORG], 'grant:manage': [f'{ORG}/*']}, ORG)
    for spelling in ('X-Memory-On-Behalf-Of', 'X-Agent-Memory-On-Behalf-Of', 'X-Spectron-On-Behalf-Of'):
        code, me, _ = manager.call('views', 'GET', '/me', headers={spelling: 'alice'})
        assert code == 200 and me['principalId'] == 'manager' and me['delegatedPrincipalId'] == 'alice'
    assert 'asthma' in values_with(manager, header)['state']
    narrow = make_principal(services, context_id, 'bobs-manager', {'grant:manage': [f'{BOB}/*']}, BOB)
    assert 'asthma' not in values_with(narrow, header)['state']
    assert manager.call('views', 'GET', '/me', headers={'X-Memory-On-Behalf-Of': 'nobody'})[0] == 403


def values_with(api: Api, headers: dict[str, str]) -> dict[str, Any]:
    _, state, _ = api.call('views', 'GET', '/state', headers=headers)
    return {'state': [a['value'] for section in ('identity', 'knowledge', 'context') for a in state[section]['attributes']]}


def test_an_attenuated_key_sees_less_than_its_principal(world: World, services: Any, context_id: str) -> None:
    # Given a key of Alice narrowed to the org, When it reads, Then it sees only org facts and /me shows token and
    # effective grants
    token = mint_token()
    services.control.put_key(KeyRecord(context_id, 'alice', 'narrow', hash_key(token), {'memory:read': [ORG]}, None), utcnow())
    narrowed = Api(context_id, token)
    assert values(narrowed)['state'] == ['remote-first']
    _, me, _ = narrowed.call('views', 'GET', '/me')
    assert me['tokenGrants'] == {'memory:read': [ORG]} and me['effectiveGrants']['memory:read'] == [ORG]
    assert me['grants']['memory:read'] == [ORG, f'{ALICE}/*']


def test_visibility_fingerprint_follows_the_readable_region(world: World, services: Any) -> None:
    # Given callers with different regions, lenses and labels, When fingerprints are computed, Then they are equal
    # exactly when the readable region, lens and labels are
    from agent_memory.domain.auth import authenticate

    def caller(api: Api) -> Any:
        return authenticate(services.control, services.store, {'authorization': f'Bearer {api.key}'}, api.context_id)

    alice, bob, reader = caller(world.alice), caller(world.bob), caller(world.reader)
    assert fingerprint(alice) == fingerprint(caller(world.alice))
    assert fingerprint(alice) != fingerprint(bob)
    assert fingerprint(alice, lens=[ORG]) == fingerprint(reader) == fingerprint(bob, lens=[ORG])
    assert fingerprint(reader, labels=['topic=x']) != fingerprint(reader)


def test_rate_limit_answers_429_with_retry_after_per_key(services: Any, context_id: str, world: World) -> None:
    # Given a context rate limit with burst 3, When Bob calls four times, Then the fourth is 429 with Retry-After and
    # Alice's key still works
    services.control.db.query('control', 'UPDATE type::record("context", $c) SET config = $cfg;',
                              {'c': context_id, 'cfg': {'rate_limit': {'requests_per_minute': 60, 'burst': 3}}})  # fmt: skip
    codes = [world.bob.call('views', 'GET', '/me')[0] for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    code, body, headers = world.bob.call('views', 'GET', '/me')
    assert code == 429 and int(headers['Retry-After']) >= 1 and body['status'] == 429
    assert world.alice.call('views', 'GET', '/me')[0] == 200  # another key has its own bucket


def test_two_contexts_with_the_same_names_never_mix(services: Any, api: Api) -> None:
    # Given two contexts holding facts under the same names, When each is read, Then neither sees the other's
    from agent_memory.domain.contexts import create_context

    other_id = f'{api.context_id}b'
    create_context(services.control, services.store, other_id, {})
    try:
        other = make_principal(services, other_id, 'alice', {'memory:read': ['*'], 'memory:write': ['*']}, '/')
        fact('Alice', 'plan', 'Free', '/', api)
        fact('Alice', 'plan', 'Enterprise', '/', other)
        assert [a['value'] for a in api.call('entities', 'GET', '/entities/person/alice')[1]['attributes']] == ['Free']
        assert [a['value'] for a in other.call('entities', 'GET', '/entities/person/alice')[1]['attributes']] == ['Enterprise']
        assert len(api.call('entities', 'GET', '/entities/person/alice/history/plan')[1]['history']) == 1
        assert other.call('views', 'GET', f'/api/v1/{api.context_id}/me')[0] == 401
    finally:
        services.control.delete_context(other_id)
        services.drop_context(other_id)


def test_the_hourly_sweep_drops_only_idle_rate_buckets(services: Any, world: World) -> None:
    # Given a fresh bucket and one idle for two days, When the hourly sweep runs, Then only the idle one is dropped
    import datetime as dt

    from local_runtime.events import LocalContext, schedule_event
    from tests.support.handlers import load_function

    assert world.bob.call('views', 'GET', '/me')[0] == 200
    services.db.query('control', 'CREATE rate_bucket:stale SET tokens = 1.0, updated_at = $t;', {'t': utcnow() - dt.timedelta(days=2)})
    result = load_function('sweep_hourly').lambda_handler(schedule_event('hourly'), LocalContext())
    assert result['rateBucketsPurged'] >= 1
    remaining = services.db.query('control', 'SELECT VALUE record::id(id) FROM rate_bucket;')[0]
    assert 'stale' not in remaining and len(remaining) >= 1  # Bob's fresh bucket survives
