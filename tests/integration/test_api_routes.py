"""Handlers end to end on embedded SurrealDB: facts, sessions, entities, state, profile, me, inspect, health."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.chunks import split_text
from tests.support.db_snapshot import snapshot
from tests.support.handlers import MANAGEMENT_KEY, Api, load_function
from tests.support.round_trips import record_round_trips
from tests.support.worker import Worker


def triple(name: str, key: str, value: str, **extra: Any) -> dict[str, Any]:
    return {'entity': {'type': 'person', 'name': name}, 'key': key, 'value': value, **extra}


def test_infer_none_stores_turn_and_chunks(api: Api, store: MemoryStore) -> None:
    # Given a long text
    text = ('word ' * 1000).strip()
    # When it is remembered literally
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text, 'role': 'assistant'})
    # Then one turn and several chunks (≤ 1000 characters each, all embedded now) exist, and the turn is listed in its session
    assert code == 200 and body['mode'] == 'none' and body['chunkId']
    assert store.table_counts()['memory_chunk'] == len(split_text(text)) > 1
    chunks = store.rows('SELECT text, embedding FROM memory_chunk;')
    assert all(len(c['text']) <= 1000 and len(c['embedding']) == 384 for c in chunks)
    code, turns, _ = api.call('sessions', 'GET', f'/sessions/{body["sessionId"]}/turns')
    assert code == 200
    assert [(t['id'], t['role'], t['seq'], t['content']) for t in turns['turns']] == [(body['turnId'], 'assistant', 1, text)]


def test_turns_append_in_order_to_an_existing_session(api: Api) -> None:
    # Given a created session, When three turns are written to it and read in pages, Then they come back in order with
    # their seq
    code, session, _ = api.call('sessions', 'POST', '/sessions', {'metadata': {'channel': 'web'}})
    assert code == 201 and session['scopes'] == [['/']] and session['metadata'] == {'channel': 'web'}
    for text in ('one', 'two', 'three'):
        assert api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text, 'session_id': session['id']})[0] == 200
    _, turns, _ = api.call('sessions', 'GET', f'/sessions/{session["id"]}/turns', query={'limit': '2'})
    assert [t['content'] for t in turns['turns']] == ['one', 'two'] and turns['page']['hasMore'] is True
    _, rest, _ = api.call('sessions', 'GET', f'/sessions/{session["id"]}/turns', query={'offset': '2'})
    assert [(t['content'], t['seq']) for t in rest['turns']] == [('three', 3)]


def test_closed_session_refuses_new_turns_but_keeps_old_ones(api: Api, store: MemoryStore) -> None:
    # Given a closed session with one turn, When another turn is written to it, Then it is 409, nothing changed and the
    # old turn is still listed
    _, session, _ = api.call('sessions', 'POST', '/sessions', {})
    api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'kept', 'session_id': session['id']})
    assert api.call('sessions', 'DELETE', f'/sessions/{session["id"]}')[0] == 204
    before = snapshot(store)
    assert api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'late', 'session_id': session['id']})[0] == 409
    assert snapshot(store) == before
    assert [t['content'] for t in api.call('sessions', 'GET', f'/sessions/{session["id"]}/turns')[1]['turns']] == ['kept']


def test_duplicate_session_id_is_409(api: Api) -> None:
    # Given a session with a caller-chosen id, When the same id is created again, Then it is 409
    assert api.call('sessions', 'POST', '/sessions', {'id': 'chat-1'})[0] == 201
    assert api.call('sessions', 'POST', '/sessions', {'id': 'chat-1'})[0] == 409


def test_entity_read_state_and_profile_shapes(api: Api) -> None:
    # Given identity, knowledge and context facts plus a relation
    api.call(
        'facts',
        'POST',
        '/facts',
        {
            'infer': 'triples',
            'triples': [
                triple('Alice', 'title', 'CTO', memory_category='identity'),
                triple('Alice', 'plan', 'Pro'),
                triple('Alice', 'mood', 'busy', memory_category='context'),
                {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'works_at', 'target': {'type': 'company', 'name': 'Acme'}},
            ],
        },
    )
    # When the entity, state and profile are read
    code, entity, _ = api.call('entities', 'GET', '/entities/person/Alice')
    assert code == 200
    attributes = {a['key']: a for a in entity['attributes']}
    # Then attributes carry importance, validUntil and tentative, camelCase
    assert {k: (a['value'], a['memoryCategory'], a['importance']) for k, a in attributes.items()} == {
        'title': ('CTO', 'identity', 1.0),
        'plan': ('Pro', 'knowledge', 0.8),
        'mood': ('busy', 'context', 0.5),
    }
    assert all(a['validUntil'] is None and a['tentative'] is False for a in attributes.values())
    assert entity['relations'][0]['object'] == 'entity:organisation/acme'
    _, state, _ = api.call('views', 'GET', '/state')
    assert [a['key'] for a in state['identity']['attributes']] == ['title']
    assert [a['key'] for a in state['context']['attributes']] == ['mood']
    assert [r['label'] for r in state['knowledge']['relations']] == ['works_at']
    assert set(state) == {'identity', 'knowledge', 'context', 'instructions', 'unknowns', 'truncated'}
    _, profile, _ = api.call('views', 'GET', '/profile')
    assert [(p['key'], p['entity'], p['entityType']) for p in profile['static']] == [('title', 'Alice', 'person')]
    assert [p['key'] for p in profile['dynamic']] == ['mood']
    assert [p['key'] for p in profile['preferences']] == ['plan']


def test_profile_reads_every_section_in_one_round_trip_and_the_names_in_a_second(
    api: Api, store: MemoryStore, worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given self facts and an instruction extracted from a turn, and facts in each memory category about Alice
    assert api.call('facts', 'POST', '/facts', {'text': "I'm Sam, a data engineer at Acme. Always answer in bullet points."})[0] == 202
    worker.drain()
    triples = [
        triple('Alice', 'title', 'CTO', memory_category='identity'),
        triple('Alice', 'plan', 'Pro'),
        triple('Alice', 'mood', 'busy', memory_category='context'),
    ]
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': triples})
    # When the profile is read
    recorded = record_round_trips(monkeypatch, store.database)
    code, profile, _ = api.call('views', 'GET', '/profile')
    # Then the context's database sees two round trips, and each section holds its own rows
    assert code == 200 and len(recorded) == 2, [trip.sql for trip in recorded]
    assert {(f['key'], f['value']) for f in profile['selfFacts']} >= {('name', 'Sam'), ('occupation', 'data engineer')}
    own = [(f['key'], f['entity']) for f in profile['selfFacts']]  # extracted self facts are identity facts
    assert [(p['key'], p['entity']) for p in profile['static']] == [*own, ('title', 'Alice')]
    assert [(p['key'], p['entity']) for p in profile['preferences']] == [('plan', 'Alice')]
    assert [(p['key'], p['entity']) for p in profile['dynamic']] == [('mood', 'Alice')]
    assert [i['description'] for i in profile['instructions']] == ['Always answer in bullet points']


SECTIONS = ('static', 'dynamic', 'preferences')


def test_the_callers_own_facts_are_also_in_the_section_of_their_category(api: Api, worker: Worker) -> None:
    # Given the caller's own facts in each memory category (the name it gave, where it lives, where it works) and a fact
    # about Alice
    for text, category in (("I'm Sam.", 'identity'), ('I live in Lisbon.', 'context'), ('I work at Acme.', 'knowledge')):
        assert api.call('facts', 'POST', '/facts', {'text': text, 'memory_category': category})[0] == 202
    worker.drain()
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', 'title', 'CTO', memory_category='identity')]})
    # When the profile is read
    code, profile, _ = api.call('views', 'GET', '/profile')
    # Then selfFacts holds all three, and each also leads the section of its category, shown by the name the user gave:
    # a client that reads only static/dynamic/preferences (the published one) sees them too
    assert code == 200
    assert sorted((f['key'], f['value']) for f in profile['selfFacts']) == [('employer', 'Acme'), ('location', 'Lisbon'), ('name', 'Sam')]
    entries = {part: [(p['key'], p['value'], p['entity'], p['entityType']) for p in profile[part]] for part in SECTIONS}
    assert entries == {
        'static': [('name', 'Sam', 'Sam', 'person'), ('title', 'CTO', 'Alice', 'person')],
        'dynamic': [('location', 'Lisbon', 'Sam', 'person')],
        'preferences': [('employer', 'Acme', 'Sam', 'person')],
    }
    # And /state and /context still list each of them once
    _, state, _ = api.call('views', 'GET', '/state')
    listed = [a['value'] for part in ('identity', 'knowledge', 'context') for a in state[part]['attributes']]
    assert sorted(listed) == ['Acme', 'CTO', 'Lisbon', 'Sam']
    _, block, _ = api.call('retrieval', 'POST', '/context', {'query': 'Where does Sam live?'})
    profile_section = block['context'].split('## Profile\n', 1)[1].split('\n\n', 1)[0]
    assert sorted(profile_section.splitlines()) == ['- employer: Acme', '- location: Lisbon', '- name: Sam']


def test_state_limit_truncates(api: Api) -> None:
    # Given three facts, When /state is read with limit 2, Then two come back and the section says it was truncated
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', f'k{i}', 'v') for i in range(3)]})
    _, state, _ = api.call('views', 'GET', '/state', query={'limit': '2'})
    assert len(state['knowledge']['attributes']) == 2 and state['truncated']['attributes'] is True


def test_entities_list_paginates_by_cursor(api: Api) -> None:
    # Given three people, When the list is read two at a time, Then the cursor leads to the third and then to no more
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple(n, 'k', 'v') for n in ('Ann', 'Bob', 'Cid')]})
    _, first, _ = api.call('entities', 'GET', '/entities', query={'limit': '2', 'type': 'person'})
    assert [e['name'] for e in first['entities']] == ['Ann', 'Bob'] and first['page']['hasMore']
    _, second, _ = api.call('entities', 'GET', '/entities', query={'limit': '2', 'cursor': first['page']['nextCursor']})
    assert [e['name'] for e in second['entities']] == ['Cid'] and second['page'] == {'hasMore': False, 'nextCursor': None}


def test_delete_entity_closes_facts_but_keeps_history(api: Api, store: MemoryStore) -> None:
    # Given Alice with a plan, When Alice is deleted, Then her current facts are gone, her history shows the plan
    # closed, and no row was removed
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', 'plan', 'Pro')]})
    counts = store.table_counts()
    assert api.call('entities', 'DELETE', '/entities/person/alice')[0] == 204
    _, entity, _ = api.call('entities', 'GET', '/entities/person/alice')
    assert entity['attributes'] == []
    _, history, _ = api.call('entities', 'GET', '/entities/person/alice/history/plan')
    assert [(h['value'], h['validUntil'] is not None) for h in history['history']] == [('Pro', True)]
    assert store.table_counts() == counts  # soft delete: nothing removed


def test_inspect_entity_and_attribute(api: Api) -> None:
    # Given a plan superseded once, When the entity and the attribute are inspected, Then the current value and the
    # history (newest first) come back
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', 'plan', 'Free')]})
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', 'plan', 'Pro')]})
    _, entity, _ = api.call('views', 'GET', '/inspect', query={'ref': 'entity:person/alice'})
    assert entity['kind'] == 'entity' and entity['entity']['name'] == 'Alice'
    _, attribute, _ = api.call('views', 'GET', '/inspect', query={'ref': 'attribute:person/alice/plan'})
    assert attribute['current']['value'] == 'Pro'
    assert [h['value'] for h in attribute['history']] == ['Pro', 'Free']


def test_inspect_refuses_point_in_time_parameters_instead_of_ignoring_them(api: Api) -> None:
    # Given an entity, When /inspect is asked with a point-in-time parameter, Then it is a 400 naming it, not a silently
    # current answer
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('Alice', 'plan', 'Free')]})
    for name in ('asOf', 'atInstant', 'validFrom', 'validUntil'):
        code, body, _ = api.call('views', 'GET', '/inspect', query={'ref': 'entity:person/alice', name: '2026-01-01T00:00:00Z'})
        assert code == 400 and body['detail'].startswith(f'{name} is not supported on inspect')
    assert api.call('views', 'GET', '/inspect', query={'ref': 'entity:person/alice'})[0] == 200


def test_route_parameters_are_taken_from_path_parameters_and_never_decoded_twice(api: Api) -> None:
    # Given a name containing a literal %25, When the entity is read through a decoded or still-encoded raw path, Then
    # the handler uses the path parameter and finds it
    from local_runtime.events import LocalContext, http_event

    name = 'Ada 100%25 Lovelace'  # a literal "%25" in a name must survive
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple(name, 'plan', 'Pro')]})
    path = f'/api/v1/{api.context_id}/entities/person/{name}'
    for raw_path in (path, path.replace(' ', '%20').replace('%25', '%2525')):  # decoded (HTTP API) or still encoded
        event = http_event('GET', raw_path, route_key='GET /api/v1/{context_id}/entities/{entity_type}/{name}',
                           path_parameters={'context_id': api.context_id, 'entity_type': 'person', 'name': name},
                           headers={'authorization': f'Bearer {api.key}'})  # fmt: skip
        result = load_function('entities').lambda_handler(event, LocalContext())
        assert result['statusCode'] == 200, result
        assert json.loads(result['body'])['entity']['name'] == name


@pytest.mark.parametrize('name', ['C#', 'What?', 'say "hi"', '€uro', 'back\\slash'])
def test_a_path_parameter_with_any_character_but_slash_reaches_the_handler(api: Api, name: str) -> None:
    # Given an entity whose name holds a character outside Powertools' default route pattern (it arrives decoded)
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple(name, 'plan', 'Pro')]})[0] == 200
    # When it is read by name, Then the route matches and the handler finds it (it was a 404 "no such route")
    code, body, _ = api.call('entities', 'GET', f'/entities/person/{name}')
    assert code == 200 and body['entity']['name'] == name, body


@pytest.mark.parametrize('context_id', ['€', 'a\x11b', 'x?y'])
def test_a_context_id_with_an_odd_character_is_422_not_a_missing_route(api: Api, context_id: str) -> None:
    # Given a context id with a character ids cannot hold, When a data or management route is called, Then 422, not a missing route
    code, body, _ = api.call('views', 'GET', f'/api/v1/{context_id}/me')
    assert code == 422 and 'context id' in body['detail'], body
    code, body, _ = api.call('contexts', 'POST', f'/api/v1/contexts/{context_id}', {}, key=MANAGEMENT_KEY)
    assert code == 422 and 'context id' in body['detail'], body


def test_me_shows_the_bootstrap_admin(api: Api) -> None:
    # Given the context's admin key, When /me is read, Then it is the admin with read '*'
    code, me, _ = api.call('views', 'GET', '/me')
    assert code == 200 and me['principalId'] == 'admin' and me['effectiveGrants']['memory:read'] == ['*']
    assert me['contextId'] == api.context_id


def test_the_key_alone_says_its_context(api: Api) -> None:
    # Given a context key and no context in the path, When GET /api/v1/me is read, Then it names the key's context and
    # principal (what the CLI's --context defaults to); an unknown key is a 401, the management key too
    code, me, _ = api.call('views', 'GET', '/api/v1/me')
    assert code == 200 and me['contextId'] == api.context_id and me['principalId'] == 'admin', me
    assert api.call('views', 'GET', '/api/v1/me', key='am_not-a-key')[0] == 401
    assert api.call('views', 'GET', '/api/v1/me', key=MANAGEMENT_KEY)[0] == 401
    code, me, _ = api.call('views', 'GET', '/api/v1/me', headers={'x-agent-memory-on-behalf-of': 'system'})
    assert code == 403, me


def test_health_ok_and_503_when_database_is_down(monkeypatch: pytest.MonkeyPatch, services: Any) -> None:
    # Given the health function, When the database answers and then does not, Then it is 200 and then 503 with
    # Retry-After
    health = load_function('health')
    from local_runtime.events import LocalContext, http_event

    ok = health.lambda_handler(http_event('GET', '/api/v1/health'), LocalContext())
    assert ok['statusCode'] == 200

    from agent_memory.errors import StoreUnavailable

    def down(*_: Any, **__: Any) -> Any:
        raise StoreUnavailable('connection refused')

    monkeypatch.setattr(services.db, 'ping', down)
    failed = health.lambda_handler(http_event('GET', '/api/v1/health'), LocalContext())
    assert failed['statusCode'] == 503 and failed['headers']['Retry-After'] == '5'


def test_management_creates_contexts_and_keys(services: Any) -> None:
    # Given the management key, When contexts and keys are created (and bad ones refused), Then the key works on the
    # data plane only and the management key on the management API only
    mgmt = Api('unused', MANAGEMENT_KEY)
    code, created, _ = mgmt.call('contexts', 'POST', '/api/v1/contexts/mgmt-test', {'config': {'lifecycle': {'context_ttl_days': 3}}})
    try:
        assert code == 201 and created['config']['lifecycle']['context_ttl_days'] == 3
        assert mgmt.call('contexts', 'POST', '/api/v1/contexts/mgmt-test', {})[0] == 409
        assert mgmt.call('contexts', 'POST', '/api/v1/contexts/bad!', {})[0] == 422
        assert mgmt.call('contexts', 'POST', '/api/v1/contexts/health', {})[0] == 422
        assert mgmt.call('contexts', 'POST', '/api/v1/contexts/x1', {'config': {'lifecycle': {'context_ttl_days': -1}}})[0] == 400
        assert services.control.get_context('x1') is None
        _, key, _ = mgmt.call('contexts', 'POST', '/api/v1/contexts/mgmt-test/principals/admin/keys/ci')
        assert Api('mgmt-test', key['secret']).call('views', 'GET', '/me')[0] == 200
        # a data-plane key is not a management key, and vice versa
        assert Api('mgmt-test', key['secret']).call('contexts', 'GET', '/api/v1/contexts/mgmt-test')[0] == 401
        assert mgmt.call('views', 'GET', '/api/v1/mgmt-test/me')[0] == 401
    finally:
        services.control.delete_context('mgmt-test')


def test_keys_are_stored_hashed(api: Api, services: Any) -> None:
    # Given a minted key, When the control rows are read, Then the secret appears nowhere
    rows = services.db.query('control', 'SELECT * FROM api_key WHERE context = $c;', {'c': api.context_id})[0]
    assert rows and all(api.key not in str(row) for row in rows)


def test_204_responses_have_no_body(api: Api) -> None:
    # Given a session, When it is deleted through the handler, Then the 204 has an empty body
    from local_runtime.events import LocalContext, http_event

    _, session, _ = api.call('sessions', 'POST', '/sessions', {})
    event = http_event('DELETE', f'/api/v1/{api.context_id}/sessions/{session["id"]}', headers={'authorization': f'Bearer {api.key}'})
    response = load_function('sessions').lambda_handler(event, LocalContext())
    assert response['statusCode'] == 204 and response['body'] == ''
