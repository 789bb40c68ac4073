"""``reusedBy`` on a trace lists only the cache hits its reader may open itself (CONTRACT §3, §10).

Two principals with the same readable region share cached answers (§8); each one's hits are its own activity. A
reader without ``grant:manage`` over the whole context sees its own traces only, so a trace it reads lists only its own
reuses; a manager sees everyone's.
"""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.composition import Services
from tests.support.chat import ALICE, QUESTION, chat
from tests.support.handlers import Api
from tests.support.principals import make_principal

pytestmark = pytest.mark.usefixtures('llm')


def trace(api: Api, trace_id: str) -> tuple[int, dict[str, Any]]:
    code, body, _ = api.call('traces', 'GET', f'/traces/{trace_id}')
    return code, body


def test_reused_by_lists_only_the_reuses_the_reader_may_see(services: Services, api: Api) -> None:
    # Given Alice's role in 'shared', and two principals who read all of 'shared' but write to their own parts of it
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': ['shared'],
                                                         'triples': [{'entity': ALICE, 'key': 'role', 'value': 'CTO'}]})  # fmt: skip
    assert code == 200, body
    bob = make_principal(services, api.context_id, 'bob', {'memory:read': ['shared/*'], 'memory:write': ['shared/bob/*']}, 'shared/bob')
    carol = make_principal(services, api.context_id, 'carol', {'memory:read': ['shared/*'], 'memory:write': ['shared/carol/*']},
                           'shared/carol')  # fmt: skip
    # When Bob's answer is served from the cache once to Carol and once to Bob
    original = chat(bob, QUESTION)
    carols, bobs = chat(carol, QUESTION), chat(bob, QUESTION)
    assert original['cached'] is False and carols['cached'] is True and bobs['cached'] is True
    # Then Bob's trace lists his own reuse only, the manager sees both, and Carol cannot open Bob's trace at all
    code, seen_by_bob = trace(bob, original['traceId'])
    assert code == 200 and [r['id'] for r in seen_by_bob['reusedBy']] == [bobs['traceId']]
    code, seen_by_admin = trace(api, original['traceId'])
    assert code == 200 and {r['id'] for r in seen_by_admin['reusedBy']} == {bobs['traceId'], carols['traceId']}
    assert trace(carol, original['traceId'])[0] == 404
    # and through the retrieval trace of the answer, and /inspect, the same
    code, by_retrieval = trace(bob, original['retrievalTraceId'])
    assert code == 200 and [r['id'] for r in by_retrieval['reusedBy']] == [bobs['traceId']]
    code, inspected, _ = bob.call('views', 'GET', '/inspect', query={'ref': f'trace:{original["traceId"]}'})
    assert code == 200 and carols['traceId'] not in str(inspected), inspected
