"""Derived rows are no more visible than every row they were built from (issue 12, hole 6; CONTRACT §3).

A /chat reply (stored as an assistant turn and its chunk) and a persisted /reflect row built from a ``team/a/hr``
fact must never land where ``shared/*`` readers retrieve the restricted value.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.derived_scope import conjoin
from tests.conftest import Api
from tests.integration.test_response_cache import llm  # noqa: F401 - the fixture
from tests.integration.test_visibility_matrix import make_principal
from tests.llm_server import LlmTestServer

HR = 'team/a/hr'


@dataclass
class Office:
    analyst: Api  # reads HR, writes only shared
    hr_lead: Api  # reads and writes HR and shared
    reader: Api  # shared only


@pytest.fixture
def office(services: Services, context_id: str, api: Api) -> Office:
    shared = {'memory:read': ['shared/*'], 'memory:write': ['shared/*']}
    analyst = make_principal(services, context_id, 'analyst', {'memory:read': ['shared/*', HR], 'memory:write': ['shared/*']}, 'shared')
    both = ['shared/*', 'team/a/*']
    hr_lead = make_principal(services, context_id, 'hr-lead', {'memory:read': both, 'memory:write': both}, 'shared')
    reader = make_principal(services, context_id, 'reader', shared, 'shared')
    triples = [{'entity': {'type': 'person', 'name': 'Dana'}, 'key': 'salary', 'value': '120k'}]
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': HR, 'triples': triples})[0] == 200
    office_fact = [{'entity': {'type': 'organisation', 'name': 'Office'}, 'key': 'wifi_password', 'value': 'swordfish'}]
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': 'shared', 'triples': office_fact})[0] == 200
    return Office(analyst, hr_lead, reader)


def chat(api: Api, message: str) -> dict[str, str]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, 'bypassCache': True})
    assert code == 200, body
    return dict(body)


def turns(api: Api, session: str) -> list[str]:
    code, body, _ = api.call('sessions', 'GET', f'/sessions/{session}/turns')
    return [t['content'] for t in body['turns']] if code == 200 else []


def passages(api: Api, query: str) -> list[str]:
    return [h['text'] for h in api.call('retrieval', 'POST', '/query', {'query': query, 'k': 20})[1]['hits']]


def test_a_reply_built_from_a_restricted_fact_is_not_republished_in_a_wider_scope(office: Office) -> None:
    body = chat(office.analyst, "What is Dana's salary?")
    assert '120k' in body['reply'] and body['memoryUpdates']['replyStored'] is False  # HR is outside its write region
    assert turns(office.reader, body['sessionId']) == ["What is Dana's salary?"]
    assert not [p for p in passages(office.reader, 'Dana salary 120k') if '120k' in p]


def test_a_reply_is_stored_in_the_conjunction_of_its_scope_and_its_sources(office: Office, store: MemoryStore) -> None:
    body = chat(office.hr_lead, "What is Dana's salary?")
    assert body['memoryUpdates']['replyStored'] is True
    reply = store.rows("SELECT scope_sets FROM turn WHERE role = 'assistant';")
    assert reply == [{'scope_sets': [['shared', HR]]}]
    assert len(turns(office.hr_lead, body['sessionId'])) == 2 and len(turns(office.reader, body['sessionId'])) == 1


def test_a_reply_from_sources_in_its_own_scope_stays_in_that_scope(office: Office) -> None:
    body = chat(office.analyst, 'What is the office wifi password?')
    assert 'swordfish' in body['reply'] and body['memoryUpdates']['replyStored'] is True
    assert len(turns(office.reader, body['sessionId'])) == 2


def test_a_model_reply_counts_every_source_it_read_even_uncited(office: Office, llm: LlmTestServer) -> None:  # noqa: F811
    llm.reply_text('I would rather not say.')
    body = chat(office.analyst, "What is Dana's salary?")
    assert 'Dana salary: 120k' in llm.requests[-1].message('user') and body['citations'] == []
    assert body['memoryUpdates']['replyStored'] is False


def test_reflect_persist_is_403_when_no_private_enough_scope_is_writable(office: Office, store: MemoryStore) -> None:
    before = store.table_counts()
    code, body, _ = office.analyst.call('retrieval', 'POST', '/reflect', {'query': "Dana's salary", 'persist': True})
    assert code == 403, body
    assert store.table_counts() == before


def test_reflect_persist_stores_the_reflection_no_wider_than_its_sources(office: Office, store: MemoryStore) -> None:
    code, body, _ = office.hr_lead.call('retrieval', 'POST', '/reflect', {'query': "Dana's salary", 'persist': True})
    assert code == 200 and body['persistedAttributes'], body
    assert store.rows("SELECT scope_sets FROM attribute WHERE key = 'reflection';") == [{'scope_sets': [['shared', HR]]}]
    assert office.reader.call('entities', 'GET', '/entities/person/dana')[0] == 404
    assert not [p for p in passages(office.reader, 'Dana salary reflection') if '120k' in p]


def test_conjoin_keeps_the_narrowest_clauses() -> None:
    assert conjoin([['shared']], [['shared']]) == [['shared']]
    assert conjoin([['shared']], [['team/a/hr']]) == [['shared', 'team/a/hr']]
    assert conjoin([['a'], ['b']], [['a']]) == [['a']]  # (a OR b) AND a = a
    assert conjoin([['a']], [['b'], ['c']]) == [['a', 'b'], ['a', 'c']]


def test_a_cached_reply_is_stored_by_the_scopes_of_what_it_cites(services: Services, context_id: str, office: Office,
                                                                 llm: LlmTestServer) -> None:  # noqa: F811 # fmt: skip
    reads = ['shared/*', HR]
    writer = make_principal(services, context_id, 'hr-writer', {'memory:read': reads, 'memory:write': ['shared/*', HR]}, 'shared')
    asker = make_principal(services, context_id, 'hr-asker', {'memory:read': reads, 'memory:write': ['shared/*']}, 'shared')
    ask = {'message': "What is Dana's salary?"}
    code, first, _ = writer.call('chat', 'POST', '/chat', ask)
    assert code == 200 and first['cached'] is False and first['memoryUpdates']['replyStored'] is True
    code, second, _ = asker.call('chat', 'POST', '/chat', ask)  # same readable region: the answer is reused
    assert code == 200 and second['cached'] is True and second['memoryUpdates']['replyStored'] is False
    assert turns(office.reader, second['sessionId']) == ["What is Dana's salary?"]  # the question only
