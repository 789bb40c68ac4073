"""Triples reconciliation through POST /facts (CONTRACT §6.1, §6.3): supersession, refresh, scopes, relations, idempotency."""

from __future__ import annotations

from typing import Any

import pytest
from surrealdb import RecordID

from agent_memory.db.memory_store import MemoryStore
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api

ALICE = {'type': 'person', 'name': 'alice'}
ALICE_REF = 'entity:person/alice'


def triple(key: str, value: str, entity: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    return {'entity': entity or ALICE, 'key': key, 'value': value, **extra}


def write(api: Api, *triples: dict[str, Any], headers: dict[str, str] | None = None, **body: Any) -> dict[str, Any]:
    status, result, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': list(triples), **body}, headers=headers)
    assert status == 200, result
    return result


def current(api: Api, entity_type: str = 'person', name: str = 'alice') -> list[dict[str, Any]]:
    status, body, _ = api.call('entities', 'GET', f'/entities/{entity_type}/{name}')
    assert status == 200, body
    return list(body['attributes'])


def current_values(api: Api, key: str) -> list[str]:
    return sorted(a['value'] for a in current(api) if a['key'] == key)


def history(api: Api, key: str) -> list[dict[str, Any]]:
    status, body, _ = api.call('entities', 'GET', f'/entities/person/alice/history/{key}')
    assert status == 200, body
    return list(body['history'])


def decision_trace(store: MemoryStore, trace_ref: str) -> dict[str, Any]:
    table, key = trace_ref.split(':', 1)
    row = store.q('SELECT * FROM ONLY $id;', id=RecordID(table, key))[0]
    assert row, trace_ref
    return dict(row)


# ---- supersession and refresh ---------------------------------------------------------------


def test_new_value_supersedes_old_at_the_same_address(api: Api, store: MemoryStore) -> None:
    # Given alice's employer is Acme
    first = write(api, triple('employer', 'Acme'))
    old_id = first['extraction']['attributes'][0]['id']
    # When a triple says Globex at the same entity, key and scope
    second = write(api, triple('employer', 'Globex'))
    new_id = second['extraction']['attributes'][0]['id']
    # Then a correction is reported
    assert second['extraction']['corrections'] == [{'entityId': ALICE_REF, 'key': 'employer', 'oldValue': 'Acme', 'newValue': 'Globex'}]
    # And only Globex is current
    assert current_values(api, 'employer') == ['Globex']
    # And the history chain is linked both ways, newest first, the old row closed
    newest, oldest = history(api, 'employer')
    assert (newest['id'], newest['value'], newest['supersedes'], newest['supersededBy'], newest['validUntil']) == (
        new_id, 'Globex', old_id, None, None)  # fmt: skip
    assert (oldest['id'], oldest['value'], oldest['supersededBy']) == (old_id, 'Acme', new_id)
    assert oldest['validUntil'] is not None
    # And the decision trace records both outcomes
    outcomes = {(o['record'], o['outcome']) for o in decision_trace(store, second['traceId'])['outcomes']}
    assert outcomes == {(old_id, 'superseded'), (new_id, 'created')}


def test_same_value_again_refreshes_instead_of_duplicating(api: Api, store: MemoryStore) -> None:
    # Given alice's employer is Acme
    first = write(api, triple('employer', 'Acme'))
    attr_id = first['extraction']['attributes'][0]['id']
    (before,) = store.q('SELECT VALUE confirmed_at FROM attribute;')[0]
    counts = store.table_counts()
    # When the same triple arrives again
    again = write(api, triple('employer', 'Acme'))
    # Then no new row, no correction, and the diff lists no new attribute
    assert again['extraction']['corrections'] == []
    assert again['extraction']['attributes'] == []
    assert len(history(api, 'employer')) == 1
    assert store.table_counts()['attribute'] == counts['attribute']
    # And the existing row was refreshed (confirmed later) and the outcome says so
    (after,) = store.q('SELECT VALUE confirmed_at FROM attribute;')[0]
    assert after > before
    assert decision_trace(store, again['traceId'])['outcomes'] == [{'record': attr_id, 'outcome': 'updated'}]


def test_two_values_in_one_request_leave_the_last_one_current(api: Api) -> None:
    # Given one request carrying two values for the same address
    # When the request is reconciled
    result = write(api, triple('employer', 'Acme'), triple('employer', 'Globex'))
    # Then the later value is current and the earlier one is born superseded
    assert current_values(api, 'employer') == ['Globex']
    newest, oldest = sorted(history(api, 'employer'), key=lambda r: r['value'] != 'Globex')
    assert oldest['value'] == 'Acme' and oldest['supersededBy'] == newest['id'] and oldest['validUntil'] is not None
    assert newest['supersedes'] == oldest['id']
    assert result['extraction']['corrections'] == [{'entityId': ALICE_REF, 'key': 'employer', 'oldValue': 'Acme', 'newValue': 'Globex'}]


def test_different_scopes_coexist(api: Api) -> None:
    # Given alice's employer in scope org/a
    write(api, triple('employer', 'Acme'), scopes=[['org/a']])
    # When a different value arrives in the non-overlapping scope org/b
    result = write(api, triple('employer', 'Globex'), scopes=[['org/b']])
    # Then nothing is superseded: both are live, each in its own scope
    assert result['extraction']['corrections'] == []
    assert current_values(api, 'employer') == ['Acme', 'Globex']
    assert all(r['supersededBy'] is None and r['validUntil'] is None for r in history(api, 'employer'))
    # And a later value in org/a supersedes only the org/a row
    write(api, triple('employer', 'Initech'), scopes=[['org/a']])
    assert current_values(api, 'employer') == ['Globex', 'Initech']


def test_context_category_key_holds_several_live_values(api: Api) -> None:
    # Given a context-category fact
    write(api, triple('doing', 'writing tests'), memory_category='context')
    # When another value for the same key arrives
    result = write(api, triple('doing', 'reviewing a PR'), memory_category='context')
    # Then both stay live and no correction is reported
    assert result['extraction']['corrections'] == []
    assert current_values(api, 'doing') == ['reviewing a PR', 'writing tests']


# ---- entities and relations -----------------------------------------------------------------


def test_relation_triple_is_visible_from_both_entities(api: Api, store: MemoryStore) -> None:
    # Given a relation triple to a company
    # When it is reconciled and each end is read
    result = write(api, {'entity': ALICE, 'key': 'works_at', 'target': {'type': 'company', 'name': 'Acme Corp'}})
    # Then the diff reports the edge with the folded type
    assert result['extraction']['relations'] == [
        {'subject': ALICE_REF, 'label': 'works_at', 'object': 'entity:organisation/acme corp', 'memoryCategory': 'knowledge'}
    ]
    # And both ends list it
    (from_alice,) = api.call('entities', 'GET', '/entities/person/alice')[1]['relations']
    status, acme, _ = api.call('entities', 'GET', '/entities/organisation/acme corp')  # rawPath as API Gateway delivers it: decoded
    assert status == 200, acme
    (from_acme,) = acme['relations']
    assert from_alice == from_acme
    assert (from_alice['subject'], from_alice['label'], from_alice['object']) == (ALICE_REF, 'works_at', 'entity:organisation/acme corp')
    # And repeating the triple adds no second edge
    write(api, {'entity': ALICE, 'key': 'works_at', 'target': {'type': 'org', 'name': 'ACME corp'}})
    assert store.table_counts()['relates_to'] == 1


def test_entity_types_fold_and_names_normalise(api: Api, store: MemoryStore) -> None:
    # Given a messy name and a capitalised type
    first = write(api, triple('role', 'CTO', entity={'type': 'Person', 'name': ' ALICE '}))
    # Then identity is (person, alice) and the display name keeps its case
    assert first['extraction']['entities'] == [
        {'id': ALICE_REF, 'name': 'ALICE', 'entityType': 'person', 'memoryCategory': 'knowledge', 'isNew': True}
    ]
    # When the same entity is named differently
    second = write(api, triple('team', 'core', entity={'type': 'people', 'name': 'alice'}))
    # Then it is the same entity, not new, and its first display name is preserved
    assert [(e['id'], e['isNew']) for e in second['extraction']['entities']] == [(ALICE_REF, False)]
    status, body, _ = api.call('entities', 'GET', '/entities/person/alice')
    assert status == 200
    assert body['entity']['name'] == 'ALICE'
    assert sorted(a['key'] for a in body['attributes']) == ['role', 'team']
    # And company / org / organization all land on one organisation
    for label in ('company', 'org', 'Organization'):
        write(api, triple('sector', 'software', entity={'type': label, 'name': 'Acme'}))
    assert store.q("SELECT VALUE id FROM entity WHERE type = 'organisation';")[0] == [RecordID('entity', ['organisation', 'acme'])]
    assert store.table_counts()['entity'] == 2


# ---- low confidence → uncertainty -----------------------------------------------------------


def test_low_confidence_value_does_not_supersede_and_records_an_uncertainty(api: Api, store: MemoryStore) -> None:
    # Given alice's employer is Acme (confidence 1.0)
    write(api, triple('employer', 'Acme'))
    # When Globex arrives with confidence 0.5, below the 0.7 floor
    result = write(api, triple('employer', 'Globex', confidence=0.5))
    # Then nothing is superseded and both values are live
    assert result['extraction']['corrections'] == []
    assert current_values(api, 'employer') == ['Acme', 'Globex']
    # And an uncertainty says what and why
    (reported,) = result['extraction']['uncertainties']
    assert reported['about'] == f'{ALICE_REF} employer'
    assert 'Globex' in reported['reason'] and 'Acme' in reported['reason']
    status, listed, _ = api.call('views', 'GET', '/uncertainty')
    assert status == 200
    (record,) = listed['uncertainties']
    assert (record['about'], record['kind'], record['entity'], record['key'], record['resolved']) == (
        f'{ALICE_REF} employer', 'confidence_floor', ALICE_REF, 'employer', False)  # fmt: skip
    # And /state lists it among the unknowns, about + reason only
    status, state, _ = api.call('views', 'GET', '/state')
    assert status == 200
    assert state['unknowns'] == [{'about': reported['about'], 'reason': reported['reason']}]
    assert 'flagged' in {o['outcome'] for o in decision_trace(store, result['traceId'])['outcomes']}


def test_confidence_must_reach_both_the_floor_and_the_existing_row(api: Api) -> None:
    # Given a value held with confidence 0.9
    write(api, triple('employer', 'Acme', confidence=0.9))
    # When a value above the floor but less sure than the existing row arrives
    lower = write(api, triple('employer', 'Globex', confidence=0.8))
    # Then it does not win
    assert lower['extraction']['corrections'] == []
    assert current_values(api, 'employer') == ['Acme', 'Globex']
    # When a value exactly as sure as the most confident live row arrives
    equal = write(api, triple('employer', 'Initech', confidence=0.9))
    # Then it supersedes the 0.9 row (≥) and, being ≥ 0.8 too, the 0.8 row as well
    assert {c['oldValue'] for c in equal['extraction']['corrections']} == {'Acme', 'Globex'}
    assert current_values(api, 'employer') == ['Initech']


# ---- traces and idempotency -----------------------------------------------------------------


def test_every_triples_write_leaves_one_decision_trace(api: Api, store: MemoryStore) -> None:
    # Given an empty context
    assert store.table_counts()['decision_trace'] == 0
    # When three writes happen (new, superseding, repeated)
    traces = [write(api, triple('employer', v))['traceId'] for v in ('Acme', 'Globex', 'Globex')]
    # Then there are three decision traces, one per write, each with the input and principal
    assert store.table_counts()['decision_trace'] == 3
    assert len(set(traces)) == 3
    for trace_ref, value in zip(traces, ('Acme', 'Globex', 'Globex'), strict=True):
        row = decision_trace(store, trace_ref)
        assert row['principal'] == 'admin'
        assert row['input']['triples'][0]['value'] == value
        assert row['outcomes']


def test_idempotency_key_replays_the_same_body(api: Api, store: MemoryStore) -> None:
    # Given a write with an Idempotency-Key
    body = {'infer': 'triples', 'triples': [triple('employer', 'Acme')]}
    headers = {'Idempotency-Key': 'write-1'}
    status1, first, _ = api.call('facts', 'POST', '/facts', body, headers=headers)
    assert status1 == 200, first
    counts = snapshot(store)
    # When the same key and body are sent again
    status2, second, _ = api.call('facts', 'POST', '/facts', body, headers=headers)
    # Then the stored response comes back unchanged and nothing was written
    assert status2 == 200
    assert second == first
    assert snapshot(store) == counts


def test_idempotency_key_with_a_different_body_is_409_and_changes_nothing(api: Api, store: MemoryStore) -> None:
    # Given a write with an Idempotency-Key
    headers = {'Idempotency-Key': 'write-1'}
    status, _, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('employer', 'Acme')]}, headers=headers)
    assert status == 200
    counts = snapshot(store)
    # When the key is reused with another body
    status, problem, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple('employer', 'Globex')]},
                                  headers=headers)  # fmt: skip
    # Then 409, and the state is untouched
    assert status == 409, problem
    assert problem['status'] == 409
    assert snapshot(store) == counts
    assert current_values(api, 'employer') == ['Acme']


def test_without_idempotency_key_a_repeat_is_a_second_write(api: Api, store: MemoryStore) -> None:
    # Given a write without a key (control for the replay test)
    body = {'infer': 'triples', 'triples': [triple('employer', 'Acme')]}
    api.call('facts', 'POST', '/facts', body)
    # When it is repeated
    api.call('facts', 'POST', '/facts', body)
    # Then it was processed again (a second decision trace), though the fact was only refreshed
    counts = store.table_counts()
    assert counts['decision_trace'] == 2
    assert counts['attribute'] == 1


@pytest.mark.parametrize('category', ['identity', 'knowledge'])
def test_supersession_applies_to_identity_and_knowledge(api: Api, category: str) -> None:
    # Given a non-context fact
    write(api, triple('title', 'Engineer'), memory_category=category)
    # When replaced
    result = write(api, triple('title', 'Staff Engineer'), memory_category=category)
    # Then it is superseded
    assert len(result['extraction']['corrections']) == 1
    assert current_values(api, 'title') == ['Staff Engineer']
