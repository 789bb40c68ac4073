"""Forgetting is complete (issue 30, finding 4): after a forget, a purge or an entity delete, no stored /chat reply or
trace text still holds the forgotten value, and no cached answer built on it is served again. Through the handlers."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.composition import Services
from tests.support.handlers import Api

SECRET = {'entity': {'type': 'person', 'name': 'Quinn'}, 'key': 'plan', 'value': 'Platinum'}


def chat(api: Api, message: str) -> dict[str, Any]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message})
    assert code == 200, body
    return body


def everything_text(api: Api, services: Services) -> str:
    """Every text the context's database holds about earlier chats: turns and traces."""
    db = services.store(api.context_id).database
    rows = services.db.query(db, 'SELECT * FROM turn; SELECT * FROM response_trace; SELECT * FROM retrieval_trace;')
    return repr(rows)


@pytest.mark.parametrize('how', ['forget', 'purge', 'delete entity'])
def test_a_forgotten_value_leaves_no_reply_or_trace_holding_it(api: Api, services: Services, how: str) -> None:
    # Given a fact and a /chat answer that quotes it (stored as the reply turn, the trace and the cache)
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [SECRET]})[0] == 200
    first = chat(api, 'What plan is Quinn on?')
    assert 'Platinum' in first['reply'] and 'Platinum' in everything_text(api, services)
    # When the fact is forgotten
    if how == 'delete entity':
        assert api.call('entities', 'DELETE', '/entities/person/quinn')[0] == 204
    else:
        code, body, _ = api.call('retrieval', 'POST', '/forget', {'query': 'Quinn plan Platinum', 'purge': how == 'purge'})
        assert code == 200 and body['deleted'] >= 1, body
    # Then no turn or trace still holds the value, the transcript shows the reply as withheld, and the question is
    # answered afresh (no cached answer built on it is served)
    assert 'Platinum' not in everything_text(api, services)
    code, turns, _ = api.call('sessions', 'GET', f'/sessions/{first["sessionId"]}/turns')
    assert code == 200 and turns['turns'][-1]['content'].startswith('(withheld:')
    code, trace, _ = api.call('traces', 'GET', f'/traces/{first["traceId"].split(":", 1)[1]}')
    assert code == 200 and 'Platinum' not in repr(trace)
    again = chat(api, 'What plan is Quinn on?')
    assert again['cached'] is False and 'Platinum' not in again['reply']
