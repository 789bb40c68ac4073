"""Delete, forget and purge never act on rows the caller cannot read, even inside its memory:forget region.

A principal whose forget grant is wider than its read grant (here: forget on ``team/a/*``, read on ``shared/*``) must
learn nothing about team A's rows and change none of them: ``DELETE /entities`` on an entity it cannot read is the
same 404 as an absent one, and a forget matched on a readable fact leaves the unreadable facts and history alone.
"""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.teams import ALICE, TEAM_A, a_rows, remember, team


@pytest.fixture
def janitor(services: Services, context_id: str) -> Api:
    verbs = {'memory:read': ['shared/*'], 'memory:write': ['shared/*'], 'memory:forget': ['shared/*', f'{TEAM_A}/*']}
    return make_principal(services, context_id, 'janitor', verbs, 'shared')


def test_delete_of_an_entity_the_caller_cannot_read_is_404_and_changes_nothing(
    services: Services, context_id: str, janitor: Api, store: MemoryStore
) -> None:
    # Given an entity only team A can read, When B deletes it, Then it is the same 404 as an absent entity and A's rows
    # are unchanged
    a = team(services, context_id, 'team-a', TEAM_A)
    remember(a, ALICE, 'plan', 'Pro')
    before = a_rows(store)
    absent = janitor.call('entities', 'DELETE', '/entities/person/nobody')
    code, body, _ = janitor.call('entities', 'DELETE', '/entities/person/alice')
    assert code == absent[0] == 404 and body['detail'] == absent[1]['detail']
    assert a_rows(store) == before


def test_forget_and_purge_leave_the_facts_the_caller_cannot_read(
    services: Services, context_id: str, janitor: Api, store: MemoryStore
) -> None:
    # Given a shared entity with facts only A can read, When B forgets and purges it, Then only B's own fact goes and
    # A's rows are unchanged
    a = team(services, context_id, 'team-a', TEAM_A)
    remember(a, ALICE, 'home_city', 'Berlin')
    remember(a, ALICE, 'home_city', 'Lisbon')
    remember(janitor, ALICE, 'nickname', 'Al')  # the janitor can read the entity through its own fact
    before = a_rows(store)
    code, body, _ = janitor.call('retrieval', 'POST', '/forget', {'query': 'Alice (person)', 'limit': 1})
    assert code == 200 and body['deleted'] == 1, body  # its own nickname only
    code, body, _ = janitor.call('retrieval', 'POST', '/forget', {'query': 'Alice (person)', 'purge': True, 'limit': 1})
    assert code == 200 and body['deleted'] == 1, body
    assert a_rows(store) == before
