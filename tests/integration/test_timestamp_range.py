"""Timestamps are accepted only in the documented range, and no stored row can break a read (issue 30, findings 2, 10).

Every timestamp a caller sends (``observedAt``, a batch message's ``ts``, ``asOf``/``validFrom``/``validUntil``, a key's
``expiresAt``) must lie in [1900-01-01, 2200-01-01) UTC, else 400 with nothing written; an observation may be at most
five minutes ahead of the server clock (a later one is 400; within the skew it counts as now). A row already stored with
a date the service would refuse today never turns a read into a 500.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.migrations import load_migrations
from tests.support.extraction import reply
from tests.support.handlers import Api, mgmt
from tests.support.llm_server import LlmTestServer
from tests.support.mcp_rpc import rpc
from tests.support.worker import Worker

OUT_OF_RANGE = ['0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z', '2200-01-01T00:00:00Z', '9999-12-31T23:59:59Z']
QUINN = {'type': 'person', 'name': 'Quinn'}


def queue_turn(api: Api, text: str) -> str:
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
    assert code == 202, body
    return str(body['turnId'])


def _future(minutes: float) -> str:
    return (utcnow() + dt.timedelta(minutes=minutes)).isoformat().replace('+00:00', 'Z')


def _writes(stamp: str) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        ('facts', '/facts', {'infer': 'none', 'text': 'Quinn plan note', 'observedAt': stamp}),
        ('facts', '/facts', {'infer': 'triples', 'observedAt': stamp, 'triples': [{'entity': QUINN, 'key': 'plan', 'value': 'Pro'}]}),
        ('facts', '/facts/batch', {'infer': 'none', 'messages': [{'role': 'user', 'content': 'Quinn plan note', 'ts': stamp}]}),
    ]


@pytest.mark.parametrize('stamp', OUT_OF_RANGE)
def test_a_timestamp_outside_the_range_is_400_on_every_input_and_writes_nothing(services: Services, api: Api, stamp: str) -> None:
    store = services.store(api.context_id)
    for function, path, body in _writes(stamp):
        code, problem, _ = api.call(function, 'POST', path, body)
        assert code == 400 and '1900' in problem['detail'], (path, problem)
    for name in ('asOf', 'validFrom', 'validUntil'):
        code, problem, _ = api.call('retrieval', 'POST', '/query', {'query': 'Quinn', name: stamp})
        assert code == 400, (name, problem)
    assert store.rows('SELECT VALUE id FROM turn;') == [] and store.rows('SELECT VALUE id FROM attribute;') == []
    # and key expiries, through the management API and self-service
    code, problem = mgmt('POST', f'/{api.context_id}/principals/admin/keys/late', {'expiresAt': stamp})
    assert code == 400, problem
    code, problem, _ = api.call('keys', 'POST', '/keys', {'name': 'late', 'expiresAt': stamp})
    assert code == 400, problem


def test_the_range_edges_and_a_few_minutes_of_clock_skew_are_accepted(api: Api) -> None:
    for stamp in ('1900-01-01T00:00:00Z', _future(2)):
        for function, path, body in _writes(stamp):
            code, answer, _ = api.call(function, 'POST', path, body)
            assert code == 200, (stamp, path, answer)
    code, answer, _ = api.call('retrieval', 'POST', '/query', {'query': 'Quinn', 'asOf': '2199-12-31T23:59:59Z'})
    assert code == 200, answer


def test_an_observation_from_the_future_never_leaves_a_key_without_a_current_value(api: Api) -> None:
    # Given Quinn's current plan
    code, body, _ = api.call(
        'facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': QUINN, 'key': 'plan', 'value': 'Free'}]}
    )
    assert code == 200, body
    # When a write claims to be observed far in the future
    for stamp in ('9999-12-31T23:59:59Z', _future(60 * 24)):
        code, problem, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'observedAt': stamp,
                                                                'triples': [{'entity': QUINN, 'key': 'plan', 'value': 'Pro'}]})  # fmt: skip
        assert code == 400, problem
    # And one a minute ahead (clock skew) supersedes it: the new value is current at once
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'observedAt': _future(1),
                                                         'triples': [{'entity': QUINN, 'key': 'plan', 'value': 'Team'}]})  # fmt: skip
    assert code == 200, body
    code, entity, _ = api.call('entities', 'GET', '/entities/person/Quinn')
    assert [a['value'] for a in entity['attributes'] if a['key'] == 'plan'] == ['Team'], entity


def _reads_answer(api: Api) -> None:
    for function, path, body in (('retrieval', '/query', {'query': 'Quinn plan note'}), ('retrieval', '/context', {'query': 'Quinn plan'}),
                                 ('chat', '/chat', {'message': 'What is the Quinn plan note?'})):  # fmt: skip
        code, answer, _ = api.call(function, 'POST', path, body)
        assert code == 200, (path, answer)
    answer = rpc(api.key, 'tools/call', {'name': 'recall', 'arguments': {'query': 'Quinn plan note'}})
    assert not answer['result'].get('isError'), answer


def test_a_row_stored_with_a_date_outside_the_range_breaks_no_read(services: Services, api: Api) -> None:
    # Given a passage and a fact about Quinn, then stored with year-1 dates (as the service once accepted), and one whose
    # date only the engine can hold (after year 9999)
    for function, path, body in _writes('2024-05-01T10:00:00Z')[:2]:
        assert api.call(function, 'POST', path, body)[0] == 200
    store = services.store(api.context_id)
    store.q("UPDATE turn SET observed_at = d'0001-01-01T00:00:00Z';")
    store.q("UPDATE memory_chunk SET created_at = d'0001-01-01T00:00:00Z';")
    store.q("UPDATE attribute SET created_at = d'0001-01-01T00:00:00Z', valid_from = d'0001-01-01T00:00:00Z';")
    # When anyone reads what pulls those rows
    # Then every read answers
    _reads_answer(api)
    store.q("UPDATE turn SET observed_at = d'9999-12-31T00:00:00Z' + 100y;")
    _reads_answer(api)


def test_the_migration_brings_stored_dates_into_the_range_and_restores_the_current_value(services: Services, api: Api) -> None:
    # Given a value superseded, as the service once allowed, by one observed in year 9999, and a turn observed in year 1
    for value in ('Free', 'Pro'):
        code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'text': f'Quinn is on {value}',
                                                             'triples': [{'entity': QUINN, 'key': 'plan', 'value': value}]})  # fmt: skip
        assert code == 200, body
    store = services.store(api.context_id)
    store.q("UPDATE attribute SET valid_from = d'9999-12-31T00:00:00Z', created_at = d'9999-12-31T00:00:00Z' WHERE value = 'Pro';")
    store.q("UPDATE turn SET observed_at = d'0001-01-01T00:00:00Z';")
    code, entity, _ = api.call('entities', 'GET', '/entities/person/Quinn')
    assert not [a for a in entity['attributes'] if a['key'] == 'plan'], entity  # the key has no current value
    # When the repair migration runs
    repair = next(m for m in load_migrations('context') if m.name == 'timestamps_in_range')
    store.q(repair.sql)
    # Then the newest value is current again and no stored time lies outside the range
    code, entity, _ = api.call('entities', 'GET', '/entities/person/Quinn')
    assert [a['value'] for a in entity['attributes'] if a['key'] == 'plan'] == ['Pro'], entity
    low, high = dt.datetime(1900, 1, 1, tzinfo=dt.UTC), dt.datetime(2200, 1, 1, tzinfo=dt.UTC)
    stamps = store.rows('SELECT VALUE [observed_at, created_at] FROM turn;') + store.rows(
        'SELECT VALUE [valid_from, created_at] FROM attribute;'
    )
    assert all(low <= s < high for pair in stamps for s in pair), stamps


def test_expires_at_cannot_pass_the_ten_year_key_lifetime_cap(api: Api) -> None:
    eleven_years = (utcnow() + dt.timedelta(days=11 * 365)).isoformat().replace('+00:00', 'Z')
    code, problem = mgmt('POST', f'/{api.context_id}/principals/admin/keys/long', {'expiresAt': eleven_years})
    assert code == 400 and '10 years' in problem['detail'], problem
    code, problem, _ = api.call('keys', 'POST', '/keys', {'name': 'long', 'expiresAt': eleven_years})
    assert code == 400 and '10 years' in problem['detail'], problem
    nine_years = (utcnow() + dt.timedelta(days=9 * 365)).isoformat().replace('+00:00', 'Z')
    code, minted = mgmt('POST', f'/{api.context_id}/principals/admin/keys/ok', {'expiresAt': nine_years})
    assert code == 201, minted


def test_a_model_date_outside_the_range_is_dropped_not_stored(
    services: Services, api: Api, worker: Worker, with_llm: LlmTestServer
) -> None:
    # Given a model that dates a fact to year 1 and its end to year 9999
    dated = {
        'entity': QUINN,
        'key': 'plan',
        'value': 'Pro',
        'category': 'knowledge',
        'confidence': 0.95,
        'valid_from': '0001-01-01T00:00:00Z',
        'valid_until': '9999-12-31T00:00:00Z',
        'tentative': False,
    }
    with_llm.reply_json(reply(attributes=[dated]))
    # When the worker extracts the turn
    turn = queue_turn(api, 'Quinn is on the Pro plan.')
    worker.drain()
    assert api.call('facts', 'GET', f'/extractions/{turn}')[1]['status'] == 'done'
    # Then the fact is stored with its turn's known time and no end, and reads answer
    row = services.store(api.context_id).rows("SELECT valid_from, valid_until FROM attribute WHERE key = 'plan';")[0]
    assert row['valid_until'] is None and dt.datetime(1900, 1, 1, tzinfo=dt.UTC) <= row['valid_from'] <= utcnow(), row
    _reads_answer(api)
