"""Traces obey the reader's grants today (issue 30, finding 1; CONTRACT §3, §10).

A trace holds texts drawn from memory (the reply, its citations, the rows a read returned, the question). A caller
sees them only while its current ``memory:read`` region covers the region the trace was made under; otherwise they are
redacted to the rows it may read now. Delegation never reaches ``admin`` or ``system`` (finding 11).
"""

from __future__ import annotations

import json
from typing import Any

from agent_memory.composition import Services
from tests.support.handlers import Api, mgmt
from tests.support.mcp_rpc import rpc
from tests.support.principals import make_principal

QUINN = {'type': 'person', 'name': 'Quinn'}
SECRET = 'pancreatitis'
TEAM_A = {'memory:read': ['team/a/*'], 'memory:write': ['team/a/*'], 'memory:forget': ['team/a/*']}


def _write_secret(api: Api) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': ['team/a/hr'],
                                                         'triples': [{'entity': QUINN, 'key': 'diagnosis', 'value': SECRET}]})  # fmt: skip
    assert code == 200, body


def _chat(api: Api, message: str) -> dict[str, Any]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, 'scopes': ['team/a/hr']})
    assert code == 200, body
    return body


def _every_trace_view(api: Api, trace_id: str, retrieval_id: str) -> str:
    """What the caller can see of these traces by every route: the listing, both ids, /inspect and MCP inspect."""
    seen = []
    code, listed, _ = api.call('traces', 'GET', '/traces')
    assert code == 200, listed
    seen.append(listed)
    for ref in (trace_id, retrieval_id):
        code, one, _ = api.call('traces', 'GET', f'/traces/{ref}')
        assert code in (200, 404), one
        seen.append(one)
        code, inspected, _ = api.call('views', 'GET', '/inspect', query={'ref': f'trace:{ref}'})
        assert code in (200, 404), inspected
        seen.append(inspected)
        answer = rpc(api.key, 'tools/call', {'name': 'inspect', 'arguments': {'ref': f'trace:{ref}'}})
        seen.append(answer)
    return json.dumps(seen)


def test_a_key_narrowed_below_the_traces_region_sees_no_text_it_cannot_read(services: Services, api: Api) -> None:
    # Given pa, who reads and writes team/a, asked about Quinn's diagnosis (kept in team/a/hr)
    pa = make_principal(services, api.context_id, 'pa', TEAM_A, 'team/a')
    _write_secret(pa)
    answer = _chat(pa, "What is Quinn's diagnosis?")
    assert SECRET in answer['reply'], answer
    assert SECRET in _every_trace_view(pa, answer['traceId'], answer['retrievalTraceId'])
    # When pa's key reads only team/a/public, or nothing, or only writes
    public = make_principal(services, api.context_id, 'pa2', TEAM_A, 'team/a', key_grants={'memory:read': ['team/a/public']})
    for n, narrowed in enumerate(({'memory:read': ['team/a/public']}, {}, {'memory:write': ['team/a/*']})):
        code, minted = mgmt('POST', f'/{api.context_id}/principals/pa/keys/narrow{n}', {'grants': narrowed})
        assert code == 201, minted
        key = Api(api.context_id, minted['secret'])
        # Then /query finds nothing, and no trace view shows the secret (or the question naming it)
        code, found, _ = key.call('retrieval', 'POST', '/query', {'query': "Quinn's diagnosis"})
        assert code == 200 and SECRET not in json.dumps(found['hits'])
        assert SECRET not in _every_trace_view(key, answer['traceId'], answer['retrievalTraceId'])
    assert public  # another principal with the same attenuated key shape sees none of pa's traces anyway
    assert SECRET not in _every_trace_view(public, answer['traceId'], answer['retrievalTraceId'])


def test_narrowing_a_principals_grants_redacts_its_old_traces_at_once(services: Services, api: Api) -> None:
    # Given pa's earlier chat about the secret
    pa = make_principal(services, api.context_id, 'pa', TEAM_A, 'team/a')
    _write_secret(pa)
    answer = _chat(pa, "What is Quinn's diagnosis?")
    # When pa's grants are narrowed to team/a/public
    public = {'memory:read': ['team/a/public/*'], 'memory:write': ['team/a/public/*']}
    code, body = mgmt('PATCH', f'/{api.context_id}/principals/pa', {'grants': public, 'defaultScopes': ['team/a/public']})
    assert code == 200, body
    # Then /chat is clean and no trace view shows the secret any more
    assert SECRET not in _chat_public(pa)
    assert SECRET not in _every_trace_view(pa, answer['traceId'], answer['retrievalTraceId'])
    # And the manager of the whole context still sees it
    assert SECRET in _every_trace_view(api, answer['traceId'], answer['retrievalTraceId'])


def _chat_public(api: Api) -> str:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': "What is Quinn's diagnosis?", 'bypassCache': True})
    assert code == 200, body
    return str(body['reply'])


def test_delegation_never_reaches_admin_or_system(services: Services, api: Api) -> None:
    # Given the admin's chat about team/b deals, and a manager of team/a
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'scopes': ['team/b/deals'],
                                                         'triples': [{'entity': {'type': 'project', 'name': 'Zephyr'}, 'key': 'price',
                                                                      'value': '41 million'}]})  # fmt: skip
    assert code == 200, body
    code, answer, _ = api.call('chat', 'POST', '/chat', {'message': "What is Zephyr's price?"})
    assert code == 200 and '41 million' in answer['reply'], answer
    manager = make_principal(services, api.context_id, 'lead', {**TEAM_A, 'grant:manage': ['team/a/*']}, 'team/a')
    # When the manager acts on behalf of admin or system
    for target in ('admin', 'system', 'principal:admin', 'Admin'):
        headers = {'X-Memory-On-Behalf-Of': target}
        # Then every request is refused and nothing is written as them
        assert manager.call('traces', 'GET', '/traces', headers=headers)[0] == 403
        code, refused, _ = manager.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'x', 'scopes': ['team/a/x']}, headers=headers)
        assert code == 403, refused
        assert manager.call('views', 'GET', '/inspect', query={'ref': f'trace:{answer["traceId"]}'}, headers=headers)[0] == 403
    # And the manager's own trace listing holds none of the admin's traces
    assert '41 million' not in json.dumps(manager.call('traces', 'GET', '/traces')[1])


def test_a_delegated_write_records_the_acting_manager(services: Services, api: Api) -> None:
    # Given a manager of team/a acting for pa
    make_principal(services, api.context_id, 'pa', TEAM_A, 'team/a')
    manager = make_principal(services, api.context_id, 'lead', {**TEAM_A, 'grant:manage': ['team/a/*']}, 'team/a')
    headers = {'X-Memory-On-Behalf-Of': 'pa'}
    # When it writes a triple and a turn for pa
    code, body, _ = manager.call('facts', 'POST', '/facts', {'infer': 'triples', 'text': 'Quinn moved to Oslo', 'scopes': ['team/a/x'],
                                                             'triples': [{'entity': QUINN, 'key': 'city', 'value': 'Oslo'}]},
                                 headers=headers)  # fmt: skip
    assert code == 200, body
    # Then the fact, the turn and the decision trace name pa as the principal and lead as the one who acted
    store = services.store(api.context_id)
    fact = store.rows("SELECT source FROM attribute WHERE key = 'city';")[0]
    assert fact['source']['principal'] == 'pa' and fact['source']['acting_principal'] == 'lead', fact
    turn = store.rows('SELECT principal, acting_principal FROM turn;')[0]
    assert turn == {'principal': 'pa', 'acting_principal': 'lead'}, turn
    decision = store.rows('SELECT principal, acting_principal FROM decision_trace;')[0]
    assert decision == {'principal': 'pa', 'acting_principal': 'lead'}, decision
    # And an own write records no acting principal
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': QUINN, 'key': 'age', 'value': '40'}]})
    own = store.rows("SELECT source FROM attribute WHERE key = 'age';")[0]
    assert own['source'].get('acting_principal') is None, own
