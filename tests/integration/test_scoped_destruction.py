"""Delete, forget and purge act only inside the caller's memory:forget region (issue 12, hole 1; CONTRACT §3, §10).

Two teams write about the same entity: team B's destructive calls must never touch, count or erase team A's rows.
"""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api
from tests.support.teams import ALICE, TEAM_A, TEAM_B, a_rows, remember, team

APOLLO = {'type': 'project', 'name': 'Apollo'}


@pytest.fixture
def teams(services: Services, context_id: str) -> tuple[Api, Api]:
    a, b = team(services, context_id, 'team-a', TEAM_A), team(services, context_id, 'team-b', TEAM_B)
    remember(a, ALICE, 'home_city', 'Berlin')
    remember(a, ALICE, 'home_city', 'Lisbon')  # supersedes Berlin: A's history has two rows
    remember(a, ALICE, 'plan', 'Pro')
    remember(b, ALICE, 'nickname', 'Al')  # B now shares the entity
    remember(b, ALICE, 'home_city', 'Porto')  # another scope: no supersession of A's value
    return a, b


def current(api: Api, entity: str = 'person/alice') -> dict[str, str]:
    code, body, _ = api.call('entities', 'GET', f'/entities/{entity}')
    return {row['key']: row['value'] for row in body['attributes']} if code == 200 else {}


def history(api: Api, key: str) -> list[str]:
    code, body, _ = api.call('entities', 'GET', f'/entities/person/alice/history/{key}')
    return [row['value'] for row in body['history']] if code == 200 else []


def test_delete_entity_closes_only_the_callers_facts(teams: tuple[Api, Api], store: MemoryStore) -> None:
    # Given Alice's facts in team A and team B, When B deletes Alice, Then only B's facts close and A's rows are
    # unchanged
    a, b = teams
    before = a_rows(store)
    assert b.call('entities', 'DELETE', '/entities/person/alice')[0] == 204
    assert current(b) == {}
    assert current(a) == {'home_city': 'Lisbon', 'plan': 'Pro'}
    assert a_rows(store) == before


@pytest.mark.parametrize('purge', [False, True])
def test_forget_of_a_shared_entity_stays_inside_the_region(teams: tuple[Api, Api], store: MemoryStore, purge: bool) -> None:
    # Given Alice shared by teams A and B, When B forgets Alice (soft or purge), Then only B's facts go and A's rows and
    # history are unchanged
    a, b = teams
    before = a_rows(store)
    code, result, _ = b.call('retrieval', 'POST', '/forget', {'query': 'Alice (person)', 'purge': purge, 'limit': 1})
    assert code == 200 and [m['text'] for m in result['matched']] == ['Alice (person)']
    assert result['deleted'] == 2  # B's nickname and home city only: A's rows are not counted
    assert current(b) == {}
    assert a_rows(store) == before
    assert current(a) == {'home_city': 'Lisbon', 'plan': 'Pro'} and history(a, 'home_city') == ['Lisbon', 'Berlin']
    assert history(b, 'home_city') == ([] if purge else ['Porto'])


def test_purge_by_attribute_keeps_the_history_outside_the_region(teams: tuple[Api, Api], store: MemoryStore) -> None:
    # Given a home city with history in both teams, When B purges it, Then B's history is erased and A's kept
    a, b = teams
    code, result, _ = b.call('retrieval', 'POST', '/forget', {'query': 'Alice home city: Porto', 'purge': True, 'limit': 1})
    assert code == 200 and result['deleted'] == 1
    assert history(a, 'home_city') == ['Lisbon', 'Berlin'] and history(b, 'home_city') == []


def test_rows_outside_the_region_are_invisible_to_the_match(teams: tuple[Api, Api], store: MemoryStore) -> None:
    # Given a fact only team A holds, When B forgets by its text, Then it is not matched and A's rows are unchanged
    a, b = teams
    before = a_rows(store)
    code, result, _ = b.call('retrieval', 'POST', '/forget', {'query': 'Alice plan: Pro', 'dryRun': True})
    assert code == 200 and 'Alice plan: Pro' not in [m['text'] for m in result['matched']]
    code, result, _ = b.call('retrieval', 'POST', '/forget', {'query': 'Alice plan: Pro', 'purge': True})
    assert code == 200 and 'Alice plan: Pro' not in [m['text'] for m in result['matched']]
    assert current(a)['plan'] == 'Pro' and a_rows(store) == before


def test_a_shared_entity_survives_a_purge_and_loses_only_the_purgers_scope(teams: tuple[Api, Api], store: MemoryStore) -> None:
    # Given a shared entity, When B purges it, Then B no longer sees it, A still does, and an entity only B held is gone
    a, b = teams
    assert b.call('retrieval', 'POST', '/forget', {'query': 'Alice (person)', 'purge': True, 'limit': 1})[0] == 200
    assert b.call('entities', 'GET', '/entities/person/alice')[0] == 404  # B no longer sees it
    assert a.call('entities', 'GET', '/entities/person/alice')[0] == 200
    remember(b, APOLLO, 'deadline', 'March 3rd')  # an entity only B refers to is erased with its facts
    code, result, _ = b.call('retrieval', 'POST', '/forget', {'query': 'Apollo (project)', 'purge': True, 'limit': 1})
    assert code == 200 and result['deleted'] == 2
    assert store.rows("SELECT id FROM entity WHERE type = 'project';") == []
