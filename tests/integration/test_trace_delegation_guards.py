"""Guards from the adversarial pass over traces, inspect, delegation and idempotency after issue 30 (they passed when
written; each names what it tried)."""

from __future__ import annotations

import json

import pytest

from agent_memory.composition import Services
from tests.support.handlers import Api, mgmt
from tests.support.mcp_rpc import rpc
from tests.support.principals import make_principal

TEAM_A = {'memory:read': ['team/a/*'], 'memory:write': ['team/a/*'], 'memory:forget': ['team/a/*']}
QUINN = {'type': 'person', 'name': 'Quinn'}


def _secret_chat(api: Api) -> dict[str, object]:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': ['team/a/hr'],
                                                         'triples': [{'entity': QUINN, 'key': 'diagnosis', 'value': 'gout'}]})  # fmt: skip
    assert code == 200, body
    code, answer, _ = api.call('chat', 'POST', '/chat', {'message': "What is Quinn's diagnosis?", 'scopes': ['team/a/hr']})
    assert code == 200 and 'gout' in answer['reply'], answer
    return dict(answer)


def test_another_principals_trace_is_404_by_every_spelling_of_its_id(services: Services, api: Api) -> None:
    pa = make_principal(services, api.context_id, 'pa', TEAM_A, 'team/a')
    pb = make_principal(services, api.context_id, 'pb', TEAM_A, 'team/a')  # the same grants: still not pa's traces
    answer = _secret_chat(pa)
    bare = str(answer['traceId']).partition(':')[2]
    for ref in (answer['traceId'], answer['retrievalTraceId'], bare, f'decision_trace:{bare}', f'x:{bare}'):
        assert pb.call('traces', 'GET', f'/traces/{ref}')[0] == 404, ref
        code, body, _ = pb.call('views', 'GET', '/inspect', query={'ref': f'trace:{ref}'})
        assert code == 404 and 'gout' not in json.dumps(body), ref
        result = rpc(pb.key, 'tools/call', {'name': 'inspect', 'arguments': {'ref': f'trace:{ref}'}})
        assert result['result'].get('isError') and 'gout' not in json.dumps(result), ref
    assert 'gout' not in json.dumps(pb.call('traces', 'GET', '/traces')[1])


@pytest.mark.parametrize('target', ['ADMIN', ' admin ', 'principal:Admin', 'System', 'ａdmin', 'admin\u200b'])
def test_no_spelling_of_a_reserved_principal_is_delegable(services: Services, api: Api, target: str) -> None:
    manager = make_principal(services, api.context_id, 'lead', {**TEAM_A, 'grant:manage': ['*']}, 'team/a')
    code, body, _ = manager.call('views', 'GET', '/me', headers={'X-Memory-On-Behalf-Of': target})
    assert code == 403, body


def test_a_delegate_replays_no_idempotent_answer_wider_than_its_region(services: Services, api: Api) -> None:
    # Given pa (reading all of team/*) who wrote over a value under an Idempotency-Key, and a manager of team/a only
    grants = {'memory:read': ['team/*'], 'memory:write': ['team/*']}
    pa = make_principal(services, api.context_id, 'pa', grants, 'team/a')
    manager = make_principal(services, api.context_id, 'lead', {**TEAM_A, 'grant:manage': ['team/a/*']}, 'team/a')
    body = {'infer': 'triples', 'scopes': ['team/a/x'], 'triples': [{'entity': QUINN, 'key': 'city', 'value': 'Oslo'}]}
    assert pa.call('facts', 'POST', '/facts', body, headers={'Idempotency-Key': 'k1'})[0] == 200
    # When the manager sends the same request as pa with the same key, Then it is refused, not replayed
    code, replay, _ = manager.call('facts', 'POST', '/facts', body, headers={'Idempotency-Key': 'k1', 'X-Memory-On-Behalf-Of': 'pa'})
    assert code == 403, replay


def test_a_hostile_trace_cursor_is_400_or_an_empty_page_never_a_500(api: Api) -> None:
    for cursor in ('0001-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '0001-01-01T00:00:00+01:00', 'x', '2024-13-01T00:00:00Z'):
        code, body, _ = api.call('traces', 'GET', '/traces', query={'cursor': cursor})
        assert code in (200, 400), (cursor, body)
    assert mgmt('GET', f'/{api.context_id}')[0] == 200
