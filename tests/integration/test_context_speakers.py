"""Every passage in /context and /sessions/{id}/context shows who said it (CONTRACT §6.2): the message's name, else the
name of the principal that wrote it (the caller's own: the name it gave), else the role."""

from __future__ import annotations

from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.worker import Worker


def context(api: Api, query: str) -> str:
    code, body, _ = api.call('retrieval', 'POST', '/context', {'query': query, 'k': 20})
    assert code == 200, body
    return str(body['context'])


def test_passages_name_their_speaker(api: Api, worker: Worker, services: Services) -> None:
    # Given two named people, the caller (who gave its name), an ingested assistant turn and another principal's turn
    messages = [{'name': 'Caroline', 'content': 'I live in Boston.'}, {'name': 'Melanie', 'content': 'I love pottery in Boston.'}]
    assert api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'none'})[0] == 200
    assert api.call('facts', 'POST', '/facts', {'text': "I'm Sam. Boston is cold.", 'infer': 'full'})[0] == 202
    worker.drain()
    batch = {'messages': [{'role': 'assistant', 'content': 'Boston has great museums.'}], 'infer': 'none'}
    assert api.call('facts', 'POST', '/facts/batch', batch)[0] == 200
    priya = make_principal(services, api.context_id, 'priya', {'memory:read': ['*'], 'memory:write': ['*']}, 'team')
    assert priya.call('facts', 'POST', '/facts', {'text': 'Boston traffic is awful.', 'infer': 'none'})[0] == 200
    # When the caller asks for a context block about Boston
    block = context(api, 'Boston')
    # Then each passage says who said it; none is shown as "(user)"
    assert ', Caroline) I live in Boston.' in block
    assert ', Melanie) I love pottery in Boston.' in block
    assert ", Sam) I'm Sam. Boston is cold." in block
    assert ', assistant) Boston has great museums.' in block
    assert ', Priya) Boston traffic is awful.' in block
    assert ', user)' not in block


def test_the_session_context_names_the_speakers_of_its_recent_turns(api: Api, worker: Worker) -> None:
    messages = [{'name': 'Caroline', 'content': 'I live in Boston.'}, {'name': 'Melanie', 'content': 'I moved to Denver.'}]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'none'})
    assert code == 200, body
    code, block, _ = api.call('retrieval', 'POST', f'/sessions/{body["sessionId"]}/context', {'query': 'where do they live'})
    assert code == 200, block
    assert '- Caroline: I live in Boston.' in block['context'] and '- Melanie: I moved to Denver.' in block['context']
