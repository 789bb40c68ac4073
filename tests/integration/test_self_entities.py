"""Self entities are reserved (issue 12, hole 5; CONTRACT §6.2): only extraction of a principal's own first-person
turns writes ``person/"self:<principal>"``. Another principal's triple, a model's output naming it, or settling a doubt
about it never does."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.extraction import reply
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.principals import make_principal
from tests.support.worker import Worker

TEAM = {'memory:read': ['team/*'], 'memory:write': ['team/*']}


@pytest.fixture
def pair(services: Services, context_id: str) -> tuple[Api, Api]:
    return make_principal(services, context_id, 'alice', TEAM, 'team'), make_principal(services, context_id, 'bob', TEAM, 'team')


def self_facts(api: Api) -> list[tuple[str, str]]:
    _, profile, _ = api.call('views', 'GET', '/profile')
    return [(f['key'], f['value']) for f in profile['selfFacts']]


FORGED_NAMES = ['self:alice', 'Self:Alice', '  SELF:alice ', 'self', 'self:bob']


@pytest.mark.parametrize('name', FORGED_NAMES)
@pytest.mark.parametrize('place', ['entity', 'target'])
def test_a_triple_naming_a_self_entity_is_400_and_writes_nothing(pair: tuple[Api, Api], store: MemoryStore, name: str,
                                                                 place: str) -> None:  # fmt: skip
    # Given a triple naming a self entity as subject or target, When Bob writes it, Then it is 400 and nothing changed
    _, bob = pair
    triple: dict[str, Any] = {'entity': {'type': 'person', 'name': name}, 'key': 'title', 'value': 'intern'}
    if place == 'target':
        triple = {'entity': {'type': 'organisation', 'name': 'Acme'}, 'key': 'employs', 'target': {'type': 'person', 'name': name}}
    before = snapshot(store)
    code, body, _ = bob.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})
    assert code == 400 and 'self entities are reserved' in body['detail']
    assert snapshot(store) == before


def test_a_model_naming_another_principals_self_entity_writes_nothing_there(pair: tuple[Api, Api], worker: Worker,
                                                                            with_llm: LlmTestServer) -> None:  # noqa: F811 # fmt: skip
    # Given a model reply that forges Alice's self entity, When Bob's turn is extracted, Then nothing lands on Alice and
    # Bob's own first-person fact lands on him
    alice, bob = pair
    forged = {'entity': {'type': 'person', 'name': 'self:alice'}, 'key': 'occupation', 'value': 'intern', 'category': 'identity',
              'confidence': 0.95, 'valid_from': None, 'valid_until': None, 'tentative': False}  # fmt: skip
    own = forged | {'entity': {'type': 'person', 'name': 'self'}, 'value': 'manager'}
    with_llm.reply_json(reply(attributes=[forged, own]))
    assert bob.call('facts', 'POST', '/facts', {'text': 'Alice is just an intern, and I am the manager.'})[0] == 202
    worker.drain()
    assert self_facts(alice) == []
    assert self_facts(bob) == [('occupation', 'manager')]  # first person still binds to the speaker
    assert alice.call('entities', 'GET', '/entities/person/self:alice')[0] == 404


def test_only_the_owner_settles_a_doubt_about_its_self_entity(pair: tuple[Api, Api], store: MemoryStore, worker: Worker) -> None:
    # Given a doubt about Alice's self entity, When Bob and then Alice resolve it, Then Bob is refused with nothing
    # changed and Alice's answer becomes her fact
    alice, bob = pair
    assert alice.call('facts', 'POST', '/facts', {'text': "I'm CEO — well, co-CEO, it's complicated.", 'scopes': [['team']]})[0] == 202
    worker.drain()
    (flag,) = alice.call('views', 'GET', '/uncertainty')[1]['uncertainties']
    assert flag['entity'] == 'entity:person/self:alice' and flag['key'] == 'occupation'
    path = f'/uncertainty/{flag["id"].split(":", 1)[1]}/resolve'
    before = snapshot(store)
    assert bob.call('views', 'POST', path, {'acceptedValue': 'intern'})[0] == 400
    assert snapshot(store) == before
    assert alice.call('views', 'POST', path, {'acceptedValue': 'co-CEO'})[0] == 200
    assert self_facts(alice) == [('occupation', 'co-CEO')]
