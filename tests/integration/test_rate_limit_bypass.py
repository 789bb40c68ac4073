"""Rate limits cannot be bypassed (issue 12, hole 8).

The bucket belongs to the principal holding the key, not to the key, so minting or rotating keys buys nothing;
a principal holds at most MAX_KEYS_PER_PRINCIPAL keys; every MCP request takes a token, not only tools/call.
"""

from __future__ import annotations

import json
from typing import Any

from agent_memory.composition import Services
from agent_memory.db.control_store import MAX_KEYS_PER_PRINCIPAL
from tests.support.handlers import MANAGEMENT_KEY, Api
from tests.support.mcp_rpc import rpc_raw
from tests.support.principals import make_principal

MGMT = Api('unused', MANAGEMENT_KEY)
EVERYTHING = {'memory:read': ['*'], 'memory:write': ['*']}


def limit(services: Services, context_id: str, burst: int) -> None:
    """A bucket that does not refill within the test (1 token a minute) and holds ``burst`` tokens."""
    services.control.db.query('control', 'UPDATE type::record("context", $c) SET config = $cfg;',
                              {'c': context_id, 'cfg': {'rate_limit': {'requests_per_minute': 1, 'burst': burst}}})  # fmt: skip


def key_rows(services: Services, context_id: str) -> list[Any]:
    return list(services.db.query('control', 'SELECT * FROM api_key WHERE context = $c ORDER BY id;', {'c': context_id})[0] or [])


def test_a_chain_of_self_minted_keys_shares_one_bucket(services: Services, context_id: str) -> None:
    # Given a principal with one key and a burst of 3
    bob = make_principal(services, context_id, 'bob', EVERYTHING, 'team/b')
    limit(services, context_id, burst=3)
    # When each new key mints the next one until refused
    keys, served = [bob], 0
    for n in range(10):
        code, body, _ = keys[-1].call('keys', 'POST', '/keys', {'name': f'chain{n}'})
        if code != 201:
            assert code == 429, body
            break
        served += 1
        keys.append(Api(context_id, body['secret']))
    before = key_rows(services, context_id)
    # Then the chain was served exactly the burst, and every key of the principal is now throttled
    assert served == 3
    assert [k.call('views', 'GET', '/me')[0] for k in keys] == [429] * len(keys)
    assert key_rows(services, context_id) == before


def test_rotating_a_key_does_not_refill_the_bucket(services: Services, context_id: str) -> None:
    # Given Bob's bucket emptied by his key, When the key is rotated, Then the new secret is still 429 (the bucket is
    # the principal's)
    bob = make_principal(services, context_id, 'bob', EVERYTHING, 'team/b')
    limit(services, context_id, burst=2)
    assert bob.call('views', 'GET', '/me')[0] == 200
    code, rotated, _ = bob.call('keys', 'POST', '/keys/k/rotate')
    assert code == 200, rotated
    assert Api(context_id, rotated['secret']).call('views', 'GET', '/me')[0] == 429


def test_another_principal_keeps_its_own_bucket(services: Services, context_id: str) -> None:
    # Given Bob's bucket emptied, When Carol calls, Then she is served
    bob = make_principal(services, context_id, 'bob', EVERYTHING, 'team/b')
    carol = make_principal(services, context_id, 'carol', EVERYTHING, 'team/c')
    limit(services, context_id, burst=1)
    assert [bob.call('views', 'GET', '/me')[0] for _ in range(2)] == [200, 429]
    assert carol.call('views', 'GET', '/me')[0] == 200


def test_a_principal_holds_at_most_the_key_cap(services: Services, context_id: str) -> None:
    # Given a principal at the cap (one key from make_principal, the rest minted by the management API)
    bob = make_principal(services, context_id, 'bob', EVERYTHING, 'team/b')
    for n in range(MAX_KEYS_PER_PRINCIPAL - 1):
        code, body, _ = MGMT.call('contexts', 'POST', f'/api/v1/contexts/{context_id}/principals/bob/keys/k{n}')
        assert code == 201, body
    before = key_rows(services, context_id)
    assert len(before) == MAX_KEYS_PER_PRINCIPAL
    # When one more is minted, by the management API or by the principal itself
    code, body, _ = MGMT.call('contexts', 'POST', f'/api/v1/contexts/{context_id}/principals/bob/keys/one-more')
    assert code == 409 and str(MAX_KEYS_PER_PRINCIPAL) in body['detail'], body
    code, body, _ = bob.call('keys', 'POST', '/keys', {'name': 'one-more'})
    assert code == 409, body
    # Then nothing was created; deleting a key makes room again
    assert key_rows(services, context_id) == before
    assert bob.call('keys', 'DELETE', '/keys/k0')[0] == 204
    assert bob.call('keys', 'POST', '/keys', {'name': 'one-more'})[0] == 201


def test_every_mcp_request_takes_a_token(services: Services, context_id: str, api: Api) -> None:
    # Given a small MCP budget, When every kind of MCP request is sent, Then each takes a token and then each is a 429
    # problem
    limit(services, context_id, burst=4)
    init = {'protocolVersion': '2025-06-18', 'capabilities': {}, 'clientInfo': {'name': 't', 'version': '1'}}
    answers = [
        rpc_raw(api.key, {'jsonrpc': '2.0', 'id': 1, 'method': 'initialize', 'params': init}),
        rpc_raw(api.key, {'jsonrpc': '2.0', 'id': 2, 'method': 'tools/list'}),
        rpc_raw(api.key, {'jsonrpc': '2.0', 'id': 3, 'method': 'ping'}),
        rpc_raw(api.key, None, method='GET'),
    ]
    assert [a['statusCode'] for a in answers] == [200, 200, 200, 405]
    # The bucket is empty now: every kind of MCP request is a 429 problem with Retry-After
    for message, method in ((None, 'GET'), ({'jsonrpc': '2.0', 'id': 4, 'method': 'ping'}, 'POST'),
                            ({'jsonrpc': '2.0', 'id': 5, 'method': 'initialize', 'params': init}, 'POST'),
                            ({'jsonrpc': '2.0', 'id': 6, 'method': 'tools/list'}, 'POST')):  # fmt: skip
        answer = rpc_raw(api.key, message, method=method)
        assert answer['statusCode'] == 429, (message, answer)
        assert int(answer['headers']['Retry-After']) >= 1 and json.loads(answer['body'])['status'] == 429
