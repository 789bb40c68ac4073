"""A request is authenticated before its body is parsed (issue 30, finding 7).

``POST /facts`` used to parse up to 1 MiB of JSON to find its ``sessionId`` before checking the key: ~160 ms of CPU for
each unauthenticated request, where every other route spends 1-2 ms. Now nothing parses a body before the key is known
good; the session id is found by a bounded scan of the raw text (the session it names is still read in the
authentication round trip).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.api import http
from tests.support.handlers import Api, mgmt

BIG = json.dumps({'infer': 'none', 'sessionId': 's1', 'text': 'x', 'labels': ['a=b'] * 140_000})


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = http.load_json

    def counted(text: str) -> Any:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(http, 'load_json', counted)
    return calls


@pytest.mark.parametrize(('function', 'path'), [('facts', '/facts'), ('facts', '/facts/batch'), ('retrieval', '/query'), ('chat', '/chat'),
                                                ('sessions', '/sessions'), ('keys', '/keys')])  # fmt: skip
def test_no_body_is_parsed_for_a_request_without_a_valid_key(api: Api, parses: list[int], function: str, path: str) -> None:
    assert len(BIG) > 900_000
    for key in ('am_not_a_key', ''):
        code, problem, _ = api.call(function, 'POST', path, BIG, key=key or None, headers={} if key else {'authorization': ''})
        assert code == 401, problem
    assert parses == [], f'{path} parsed a body before authenticating'


def test_management_routes_parse_no_body_before_the_key(parses: list[int]) -> None:
    code, problem, _ = Api('unused', 'wrong').call('contexts', 'POST', '/api/v1/contexts/x1', BIG)
    assert code == 401 and parses == [], problem


def test_the_session_named_in_a_body_is_still_found(api: Api) -> None:
    # Given a session, When /facts names it (also after a decoy key inside the text and in another object), Then the
    # turn lands in it
    assert api.call('sessions', 'POST', '/sessions', {'id': 'real'})[0] == 201
    for body in ({'infer': 'none', 'text': '"sessionId": "decoy"', 'sessionId': 'real'},
                 {'labels': ['a=b'], 'infer': 'none', 'text': 'x', 'session_id': 'real'}):  # fmt: skip
        code, answer, _ = api.call('facts', 'POST', '/facts', body)
        assert code == 200 and answer['sessionId'] == 'real', answer
    code, turns, _ = api.call('sessions', 'GET', '/sessions/real/turns')
    assert code == 200 and len(turns['turns']) == 2, turns
    assert mgmt('GET', f'/{api.context_id}')[0] == 200
