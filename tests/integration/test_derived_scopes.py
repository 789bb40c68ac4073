"""Derived rows are no more visible than every row they were built from (issue 12, hole 6; CONTRACT §3).

A /chat reply (stored as an assistant turn and its chunk) and a persisted /reflect row built from a ``team/a/hr``
fact must never land where ``shared/*`` readers retrieve the restricted value.
"""

from __future__ import annotations

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.derived_scope import conjoin
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.office import HR, Office, passages
from tests.support.principals import make_principal


def chat(api: Api, message: str) -> dict[str, str]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, 'bypassCache': True})
    assert code == 200, body
    return dict(body)


def turns(api: Api, session: str) -> list[str]:
    code, body, _ = api.call('sessions', 'GET', f'/sessions/{session}/turns')
    return [t['content'] for t in body['turns']] if code == 200 else []


def test_a_reply_built_from_a_restricted_fact_is_not_republished_in_a_wider_scope(office: Office) -> None:
    # Given an analyst who can read HR's salary fact but not write there, When it asks about the salary, Then the reply
    # is not stored and a shared reader sees only the question
    body = chat(office.analyst, "What is Dana's salary?")
    assert '120k' in body['reply'] and body['memoryUpdates']['replyStored'] is False  # HR is outside its write region
    assert turns(office.reader, body['sessionId']) == ["What is Dana's salary?"]
    assert not [p for p in passages(office.reader, 'Dana salary 120k') if '120k' in p]


def test_a_reply_is_stored_in_the_conjunction_of_its_scope_and_its_sources(office: Office, store: MemoryStore) -> None:
    # Given the HR lead, who may write to HR, When it asks about the salary, Then the reply is stored in shared AND HR
    # and only readers of both see it
    body = chat(office.hr_lead, "What is Dana's salary?")
    assert body['memoryUpdates']['replyStored'] is True
    reply = store.rows("SELECT scope_sets FROM turn WHERE role = 'assistant';")
    assert reply == [{'scope_sets': [['shared', HR]]}]
    assert len(turns(office.hr_lead, body['sessionId'])) == 2 and len(turns(office.reader, body['sessionId'])) == 1


def test_a_reply_from_sources_in_its_own_scope_stays_in_that_scope(office: Office) -> None:
    # Given a fact in the shared scope, When the analyst asks about it, Then the reply is stored there and a shared
    # reader sees it
    body = chat(office.analyst, 'What is the office wifi password?')
    assert 'swordfish' in body['reply'] and body['memoryUpdates']['replyStored'] is True
    assert len(turns(office.reader, body['sessionId'])) == 2


def test_a_model_reply_counts_every_source_it_read_even_uncited(office: Office, llm: LlmTestServer) -> None:  # noqa: F811
    # Given a model that read the salary fact but cited nothing, When the analyst asks, Then the reply is still not
    # stored in a wider scope
    llm.reply_text('I would rather not say.')
    body = chat(office.analyst, "What is Dana's salary?")
    assert 'Dana salary: 120k' in llm.requests[-1].message('user') and body['citations'] == []
    assert body['memoryUpdates']['replyStored'] is False


def test_reflect_persist_is_403_when_no_private_enough_scope_is_writable(office: Office, store: MemoryStore) -> None:
    # Given the analyst cannot write where the salary lives, When it persists a reflection on it, Then it is 403 and
    # nothing changed
    before = snapshot(store)
    code, body, _ = office.analyst.call('retrieval', 'POST', '/reflect', {'query': "Dana's salary", 'persist': True})
    assert code == 403, body
    assert snapshot(store) == before


def test_reflect_persist_stores_the_reflection_no_wider_than_its_sources(office: Office, store: MemoryStore) -> None:
    # Given the HR lead, When it persists a reflection on the salary, Then the reflection is stored in shared AND HR and
    # a shared reader finds nothing of it
    code, body, _ = office.hr_lead.call('retrieval', 'POST', '/reflect', {'query': "Dana's salary", 'persist': True})
    assert code == 200 and body['persistedAttributes'], body
    assert store.rows("SELECT scope_sets FROM attribute WHERE key = 'reflection';") == [{'scope_sets': [['shared', HR]]}]
    assert office.reader.call('entities', 'GET', '/entities/person/dana')[0] == 404
    assert not [p for p in passages(office.reader, 'Dana salary reflection') if '120k' in p]


def test_conjoin_keeps_the_narrowest_clauses() -> None:
    # Given two scope sets, When they are conjoined, Then the result is their AND in its smallest form
    assert conjoin([['shared']], [['shared']]) == [['shared']]
    assert conjoin([['shared']], [['team/a/hr']]) == [['shared', 'team/a/hr']]
    assert conjoin([['a'], ['b']], [['a']]) == [['a']]  # (a OR b) AND a = a
    assert conjoin([['a']], [['b'], ['c']]) == [['a', 'b'], ['a', 'c']]


def test_a_cached_reply_is_stored_by_the_scopes_of_what_it_cites(services: Services, context_id: str, office: Office,
                                                                 llm: LlmTestServer) -> None:  # noqa: F811 # fmt: skip
    # Given a cached salary answer, When an asker who cannot write to HR is served it, Then its reply is not stored and
    # a shared reader sees only the question
    reads = ['shared/*', HR]
    writer = make_principal(services, context_id, 'hr-writer', {'memory:read': reads, 'memory:write': ['shared/*', HR]}, 'shared')
    asker = make_principal(services, context_id, 'hr-asker', {'memory:read': reads, 'memory:write': ['shared/*']}, 'shared')
    ask = {'message': "What is Dana's salary?"}
    code, first, _ = writer.call('chat', 'POST', '/chat', ask)
    assert code == 200 and first['cached'] is False and first['memoryUpdates']['replyStored'] is True
    code, second, _ = asker.call('chat', 'POST', '/chat', ask)  # same readable region: the answer is reused
    assert code == 200 and second['cached'] is True and second['memoryUpdates']['replyStored'] is False
    assert turns(office.reader, second['sessionId']) == ["What is Dana's salary?"]  # the question only
