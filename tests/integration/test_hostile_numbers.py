"""Numbers no JSON reader should take: a 5,000-digit integer and ``1e309`` are 400s everywhere, never a 500, and never
stored (issue 30, findings 8 and 9).

Python's parser refuses integers of more than 4,300 digits with a ``ValueError`` (a 500 before), and reads ``1e309`` as
``inf``, which was stored and later sent back as ``Infinity`` (not JSON).
"""

from __future__ import annotations

import json

import pytest

from agent_memory.composition import Services
from tests.support.db_snapshot import snapshot
from tests.support.handlers import MANAGEMENT_KEY, Api
from tests.support.mcp_rpc import rpc_raw

HUGE = '9' * 5000
NUMBERS = [HUGE, '-' + HUGE, '1e309', '-1e309', '1' + '0' * 400 + '.5']
MGMT = Api('unused', MANAGEMENT_KEY)


def _bodies(number: str) -> list[tuple[str, str, str]]:
    triple = '{"infer":"triples","triples":[{"entity":{"type":"person","name":"Ann"},"key":"k","value":N}]}'.replace('N', number)
    return [
        ('facts', '/facts', '{"infer":"none","text":"x","sessionId":"s1","n":N}'.replace('N', number)),
        ('facts', '/facts', triple),
        ('facts', '/facts/batch', '{"messages":[{"role":"user","content":"x"}],"extra":N}'.replace('N', number)),
        ('retrieval', '/query', '{"query":"Ann","k":N}'.replace('N', number)),
        ('chat', '/chat', '{"message":"Who is Ann?","k":N}'.replace('N', number)),
        ('sessions', '/sessions', '{"id":"s9","metadata":{"a":N}}'.replace('N', number)),
    ]


@pytest.mark.parametrize('number', NUMBERS)
def test_a_number_no_database_holds_is_400_on_every_body_route_and_writes_nothing(services: Services, api: Api, number: str) -> None:
    before = snapshot(services.store(api.context_id))
    for function, path, raw in _bodies(number):
        code, body, _ = api.call(function, 'POST', path, raw)
        assert code == 400, (path, body)
        # and without a key it is the 401 every unauthenticated request gets
        code, body, _ = api.call(function, 'POST', path, raw, key='am_not_a_key')
        assert code == 401, (path, body)
    for raw in ('{"config":{"response_cache":{"freshness_window_seconds":N}}}'.replace('N', number),):
        code, body, _ = MGMT.call('contexts', 'PATCH', f'/api/v1/contexts/{api.context_id}', raw)
        assert code == 400, body
        code, body, _ = MGMT.call('contexts', 'POST', '/api/v1/contexts/hostile-numbers', raw)
        assert code == 400, body
    assert snapshot(services.store(api.context_id)) == before


@pytest.mark.parametrize('number', NUMBERS)
def test_mcp_refuses_such_a_number_as_a_protocol_error(api: Api, number: str) -> None:
    raw = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"query":"Ann","k":N}}}'.replace('N', number)
    result = rpc_raw(api.key, raw)
    assert result['statusCode'] < 500, result
    answer = json.loads(result['body'])
    assert 'error' in answer or answer['result'].get('isError'), answer
