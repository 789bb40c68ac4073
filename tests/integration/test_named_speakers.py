"""A message may name its speaker (CONTRACT §6.1–6.2): first person binds to person/<name>, not to the caller's self."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker


def facts_of(api: Api, name: str) -> dict[str, str]:
    code, entity, _ = api.call('entities', 'GET', f'/entities/person/{name}')
    assert code == 200, entity
    return {a['key']: a['value'] for a in entity['attributes']}


def self_facts(api: Api) -> list[tuple[str, str]]:
    return [(f['key'], f['value']) for f in api.call('views', 'GET', '/profile')[1]['selfFacts']]


def test_a_named_batch_binds_each_speakers_first_person_to_that_person(api: Api, worker: Worker) -> None:
    # Given two people talking, each message naming its speaker
    messages = [
        {'role': 'user', 'name': 'Caroline', 'content': 'I live in Boston and I love painting.'},
        {'role': 'user', 'name': 'Melanie', 'content': 'I live in Denver and I love pottery.'},
    ]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})
    assert code == 202, body

    # When the worker extracts them
    worker.drain()

    # Then each person holds their own statements, and nothing landed on the caller's self entity
    assert facts_of(api, 'Caroline') == {'location': 'Boston', 'likes': 'painting'}
    assert facts_of(api, 'Melanie') == {'location': 'Denver', 'likes': 'pottery'}
    assert self_facts(api) == []


def test_a_named_fact_binds_to_the_speaker_and_an_unnamed_one_to_the_caller(api: Api, worker: Worker) -> None:
    # Given a turn from a named speaker and one unnamed, When both are extracted, Then the first fact binds to the
    # speaker and the second to the caller
    assert api.call('facts', 'POST', '/facts', {'text': "I'm a nurse.", 'name': 'Priya Shah'})[0] == 202
    assert api.call('facts', 'POST', '/facts', {'text': "I'm a pilot."})[0] == 202
    worker.drain()
    assert facts_of(api, 'Priya Shah') == {'occupation': 'nurse'}
    assert self_facts(api) == [('occupation', 'pilot')]


def test_preview_binds_to_the_named_speaker(api: Api) -> None:
    # Given a named speaker, When the turn is previewed, Then the fact's entity is that person
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'preview', 'text': 'My name is Cara.', 'name': 'Caroline'})
    assert code == 200, body
    (entity,) = body['extraction']['entities']
    assert (entity['name'], entity['entityType']) == ('Caroline', 'person')


BAD_NAMES: list[tuple[str, Any]] = [
    ('the reserved alias', 'self'),
    ('a self entity address', 'self:admin'),
    ('a control character', 'Caro\nline'),
    ('blank', '   '),
    ('punctuation only', '--'),
    ('too long', 'a' * 129),
    ('too many words', ' '.join(['w'] * 9)),
    ('not a string', 42),
]


@pytest.mark.parametrize(('case', 'name'), BAD_NAMES, ids=[c[0] for c in BAD_NAMES])
def test_a_bad_speaker_name_is_a_400_and_changes_nothing(api: Api, store: MemoryStore, case: str, name: Any) -> None:
    # Given a bad speaker name, When a single write and a batch carry it, Then both are 400 and nothing changed
    before = snapshot(store)
    single = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'I live in Boston.', 'name': name})
    batch = api.call('facts', 'POST', '/facts/batch', {'infer': 'none', 'messages': [{'content': 'Hi.', 'name': name}]})
    assert (single[0], batch[0]) == (400, 400), (single[1], batch[1])
    assert snapshot(store) == before


def test_the_llm_stage_is_told_the_speaker_and_its_self_binds_to_them(api: Api, worker: Worker, with_llm: LlmTestServer) -> None:
    # Given a model that answers with a fact on "self", as its prompt tells it to for first person
    attribute = {'entity': {'type': 'person', 'name': 'self'}, 'key': 'hobby', 'value': 'climbing', 'category': 'identity',
                 'confidence': 0.95, 'valid_from': None, 'valid_until': None, 'tentative': False}  # fmt: skip
    empty: dict[str, list[Any]] = {k: [] for k in ('entities', 'relations', 'actions', 'instructions', 'uncertainties', 'invalidations')}
    with_llm.reply_json({**empty, 'attributes': [attribute]})

    # When a named speaker's turn is extracted, after another person's turn in the same session
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'What do you do for fun?', 'name': 'Caroline'})
    assert code == 200, body
    turn = {'text': 'Climbing is my thing.', 'name': 'Melanie', 'session_id': body['sessionId']}
    assert api.call('facts', 'POST', '/facts', turn)[0] == 202
    worker.drain()

    # Then the prompt named the speaker (and who said the earlier turn), and the fact is Melanie's, not the caller's
    (request,) = with_llm.requests
    prompt = request.body['messages'][1]['content']
    assert '"speaker_display_name": "Melanie"' in prompt and '"speaker_is_named": true' in prompt
    assert '"speaker": "Caroline"' in prompt
    # (stage 0 also reads "X is my thing" as something liked, bound to the same speaker)
    assert facts_of(api, 'Melanie') == {'hobby': 'climbing', 'likes': 'Climbing'}
    assert self_facts(api) == []
