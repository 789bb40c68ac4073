"""The user is called by their own name (CONTRACT §6.2): a self entity is shown by the name its person gave ("I'm Sam"),
else by the principal's display name — never "Admin" once a name was given. Through the handlers and MCP."""

from __future__ import annotations

import json
from typing import Any

from tests.support.handlers import Api
from tests.support.mcp_rpc import rpc
from tests.support.worker import Worker


def say(api: Api, worker: Worker, *texts: str) -> None:
    for text in texts:
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
        assert code == 202, body
    worker.drain()


def mcp(api: Api, tool: str, **arguments: Any) -> dict[str, Any]:
    result = rpc(api.key, 'tools/call', {'name': tool, 'arguments': arguments})['result']
    assert result['isError'] is False, result
    return dict(json.loads(result['content'][0]['text'])) if tool != 'context' else result


def test_the_name_the_user_gave_is_shown_everywhere(api: Api, worker: Worker) -> None:
    # Given the default admin key (display name "Admin") and a user who says who they are and where they work
    say(api, worker, "Hi, I'm Sam.", 'I work at Acme.')
    # Then every read shows the user as Sam, and none as Admin
    code, profile, _ = api.call('views', 'GET', '/profile')
    assert code == 200 and {f['entity'] for f in profile['selfFacts']} == {'Sam'}, profile
    code, state, _ = api.call('views', 'GET', '/state')
    names = {e['name'] for c in ('identity', 'knowledge', 'context') for e in state[c]['entities']}
    assert 'Sam' in names and 'Admin' not in names
    code, listed, _ = api.call('entities', 'GET', '/entities', query={'type': 'person'})
    assert [e['name'] for e in listed['entities']] == ['Sam']
    code, context, _ = api.call('retrieval', 'POST', '/context', {'query': 'Where does Sam work?'})
    assert 'Sam employer: Acme' in context['context'] and 'Admin' not in context['context']
    code, hits, _ = api.call('retrieval', 'POST', '/query', {'query': 'Where does Sam work?'})
    assert any(h['text'] == 'Sam employer: Acme' for h in hits['hits']) and not any('Admin' in h['text'] for h in hits['hits'])
    recalled = mcp(api, 'recall', query='Where does Sam work?')
    assert 'Admin' not in json.dumps(recalled) and 'Sam employer: Acme' in json.dumps(recalled)


def test_a_later_name_renames_and_an_unnamed_user_keeps_the_display_name(api: Api, worker: Worker) -> None:
    say(api, worker, 'I work at Acme.')
    code, profile, _ = api.call('views', 'GET', '/profile')
    assert {f['entity'] for f in profile['selfFacts']} == {'Admin'}  # no name given: the principal's display name
    say(api, worker, 'My name is Samantha Reyes.')
    code, profile, _ = api.call('views', 'GET', '/profile')
    assert {f['entity'] for f in profile['selfFacts']} == {'Samantha Reyes'}
