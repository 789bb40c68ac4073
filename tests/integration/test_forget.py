"""POST /forget (CONTRACT §10): semantic forget, soft by default, purge and dry run, bounded by memory:forget."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.principals import make_principal

ALICE = {'type': 'person', 'name': 'Alice'}


def remember(api: Api, *triples: dict[str, Any]) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': list(triples)})
    assert code == 200, body


def forget(api: Api, **body: Any) -> tuple[int, Any]:
    code, result, _ = api.call('retrieval', 'POST', '/forget', body)
    return code, result


def recalled(api: Api, query: str) -> list[str]:
    return [h['text'] for h in api.call('retrieval', 'POST', '/query', {'query': query, 'k': 20})[1]['hits']]


@pytest.fixture
def world(api: Api) -> Api:
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'}, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'})
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Lisbon'})  # supersedes Berlin
    remember(api, {'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'deadline', 'value': 'March 3rd'})
    return api


def history(api: Api, key: str) -> list[str]:
    code, body, _ = api.call('entities', 'GET', f'/entities/person/alice/history/{key}')
    return [row['value'] for row in body['history']] if code == 200 else []


def test_soft_forget_expires_the_closest_fact_and_keeps_its_history(world: Api) -> None:
    # Given Alice's home city changed from Berlin to Lisbon, When 'Alice lives in Lisbon' is forgotten, Then only that
    # fact closes, other facts stay and history keeps it
    code, result = forget(world, query="Alice's home city is Lisbon", limit=1)
    assert code == 200 and result['deleted'] == 1 and [m['text'] for m in result['matched']] == ['Alice home city: Lisbon']
    assert 'Alice home city: Lisbon' not in recalled(world, 'Where does Alice live?')
    assert 'Alice plan: Pro' in recalled(world, 'Alice plan')  # other facts untouched
    assert history(world, 'home_city') == ['Lisbon', 'Berlin']  # history and point-in-time reads keep it


def test_dry_run_matches_and_changes_nothing(world: Api, store: MemoryStore) -> None:
    # Given a seeded world, When forget runs as a dry run, Then it lists matches and nothing changed
    before = snapshot(store)
    code, result = forget(world, query="Alice's home city is Lisbon", dryRun=True)
    assert code == 200 and result['dryRun'] is True and result['deleted'] == 0 and result['matched']
    assert snapshot(store) == before


def test_purge_erases_the_address_history_and_forgetting_an_entity_takes_its_facts(world: Api, store: MemoryStore) -> None:
    # Given a fact with history and a project entity, When each is forgotten with purge, Then the address history is
    # erased and the entity takes its facts with it
    code, result = forget(world, query="Alice's home city is Lisbon", purge=True, limit=1)
    assert code == 200 and result['deleted'] == 2  # Lisbon and the superseded Berlin
    assert history(world, 'home_city') == []
    code, result = forget(world, query='Apollo (project)', limit=1)
    assert code == 200 and [m['text'] for m in result['matched']] == ['Apollo (project)'] and result['deleted'] == 1
    assert 'Apollo deadline: March 3rd' not in recalled(world, 'When is the Apollo deadline?')


def test_a_vague_query_forgets_nothing(world: Api, store: MemoryStore) -> None:
    # Given a seeded world, When forget gets a query matching nothing closely, Then nothing is matched or changed
    before = snapshot(store)
    code, result = forget(world, query='the weather on Mars tomorrow')
    assert code == 200 and result == {'deleted': 0, 'purged': False, 'matched': []}
    assert snapshot(store) == before


def test_forget_is_bounded_by_the_forget_grant(world: Api, services: Services, store: MemoryStore) -> None:
    # Given a reader without forget and a principal whose forget region holds none of the facts, When they forget, Then
    # the first is 403, the second matches nothing, and nothing changed
    reader = make_principal(services, world.context_id, 'reader', {'memory:read': ['*']}, 'org')
    assert forget(reader, query='Alice home city')[0] == 403
    elsewhere = make_principal(services, world.context_id, 'other', {'memory:read': ['*'], 'memory:forget': ['org/other/*']}, 'org')
    before = snapshot(store)
    code, result = forget(elsewhere, query="Alice's home city is Lisbon")
    assert code == 200 and result['deleted'] == 0 and result['matched'] == []
    assert snapshot(store) == before


@pytest.mark.parametrize('body', [{}, {'query': ''}, {'query': '  '}, {'query': 'x', 'limit': 51}, {'query': 'x', 'purge': 'yes please'}])
def test_bad_forget_requests_are_400_and_change_nothing(world: Api, store: MemoryStore, body: dict[str, Any]) -> None:
    # Given a malformed forget body, When it is sent, Then it is a 400 and nothing changed
    before = snapshot(store)
    assert world.call('retrieval', 'POST', '/forget', body)[0] == 400
    assert snapshot(store) == before
