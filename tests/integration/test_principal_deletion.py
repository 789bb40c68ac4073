"""Deleting a principal deletes everything bound to it; a re-created id starts empty (issue 30, finding 5).

Bound to a principal: its keys, its self entity and every fact, relation, action and doubt about it, its sessions
with their turns and passages (and its turns in other sessions), its traces (so its cached first-person answers),
its idempotency records and its rate-limit bucket. Facts it wrote about anyone else are scoped knowledge and stay.
"""

from __future__ import annotations

import json

from agent_memory.composition import Services
from tests.support.handlers import Api, mgmt
from tests.support.worker import Worker

GRANTS = {'memory:read': ['team/*'], 'memory:write': ['team/*'], 'memory:forget': ['team/*']}


def _principal(context_id: str) -> Api:
    code, created = mgmt('POST', f'/{context_id}/principals', {'id': 'pat', 'displayName': 'Pat', 'kind': 'human', 'grants': GRANTS})
    assert code == 201, created
    code, minted = mgmt('POST', f'/{context_id}/principals/pat/keys/main', {})
    assert code == 201, minted
    return Api(context_id, minted['secret'])


def _bound_rows(services: Services, context_id: str) -> dict[str, int]:
    store = services.store(context_id)
    counts = {}
    for table in ('session', 'turn', 'retrieval_trace', 'response_trace', 'decision_trace'):
        counts[table] = len(store.rows(f"SELECT VALUE id FROM {table} WHERE principal = 'pat';"))
    counts['self entity'] = len(store.rows("SELECT VALUE id FROM entity WHERE self_principal = 'pat';"))
    counts['self facts'] = len(store.rows("SELECT VALUE id FROM attribute WHERE entity_ref = 'person/self:pat';"))
    counts['idempotency'] = len(store.rows("SELECT VALUE id FROM idempotency WHERE record::id(id)[0] = 'pat';"))
    counts['chunks'] = len(store.rows("SELECT VALUE id FROM memory_chunk WHERE string::contains(text, 'Tromso');"))
    return counts


def test_a_recreated_principal_inherits_nothing(services: Services, api: Api, worker: Worker) -> None:
    # Given Pat, who said where she lives, wrote a fact about Bob, and asked about herself (a first-person answer)
    pat = _principal(api.context_id)
    assert pat.call('sessions', 'POST', '/sessions', {'id': 'diary', 'scopes': ['team/pat']})[0] == 201
    code, body, _ = pat.call('facts', 'POST', '/facts', {'text': 'I live in Tromso.', 'sessionId': 'diary', 'scopes': ['team/pat']})
    assert code == 202, body
    worker.drain()
    bob = {'entity': {'type': 'person', 'name': 'Bob'}, 'key': 'role', 'value': 'CFO'}
    body = {'infer': 'triples', 'scopes': ['team/x'], 'triples': [bob]}
    code, body, _ = pat.call('facts', 'POST', '/facts', body, headers={'Idempotency-Key': 'once'})
    assert code == 200, body
    code, answer, _ = pat.call('chat', 'POST', '/chat', {'message': 'Where do I live?', 'scopes': ['team/pat']})
    assert code == 200 and 'Tromso' in answer['reply'], answer
    before = _bound_rows(services, api.context_id)
    assert all(before.values()), before
    # When Pat is deleted and a principal with the same id and grants is created
    assert mgmt('DELETE', f'/{api.context_id}/principals/pat') == (204, None)
    assert _bound_rows(services, api.context_id) == dict.fromkeys(before, 0)
    again = _principal(api.context_id)
    # Then it has no self facts, no traces, no session, no cached answer and no passage of hers
    code, profile, _ = again.call('views', 'GET', '/profile')
    assert code == 200 and profile['selfFacts'] == [], profile
    code, traces, _ = again.call('traces', 'GET', '/traces')
    assert code == 200 and traces['traces'] == [], traces
    assert again.call('sessions', 'GET', '/sessions/diary/turns')[0] == 404
    code, fresh, _ = again.call('chat', 'POST', '/chat', {'message': 'Where do I live?', 'scopes': ['team/pat']})
    assert code == 200 and fresh['cached'] is False and 'Tromso' not in fresh['reply'], fresh
    code, found, _ = again.call('retrieval', 'POST', '/query', {'query': 'Tromso'})
    passages_and_facts = [h for h in found['hits'] if h['source'] != 'entity']  # the place itself is knowledge, like Bob
    assert code == 200 and 'Tromso' not in json.dumps(passages_and_facts), found
    # And the same Idempotency-Key is a new write, not the old principal's replay
    code, body, _ = again.call('facts', 'POST', '/facts', {'infer': 'none', 'text': 'hello', 'scopes': ['team/x']},
                               headers={'Idempotency-Key': 'once'})  # fmt: skip
    assert code == 200 and body['mode'] == 'none', body
    # And what Pat wrote about Bob is scoped knowledge: it stays
    code, bob, _ = api.call('entities', 'GET', '/entities/person/Bob')
    assert code == 200 and [a['value'] for a in bob['attributes']] == ['CFO'], bob
