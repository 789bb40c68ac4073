"""The local gateway as a real process: HTTP in, handlers, embedded SurrealKV on disk, timers, clean stop."""

from __future__ import annotations

import datetime as dt
import json
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.support.gateway import KEY, MGMT, Gateway
from tests.support.ports import free_port


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    yield tmp_path / 'data'


def test_gateway_serves_persists_sweeps_and_stops_cleanly(data_dir: Path) -> None:
    # Given a running local gateway on a fresh data folder
    gateway = Gateway(data_dir, free_port())
    try:
        # When facts are written over real HTTP
        eight_days_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(days=8)).isoformat()
        status, body = gateway.request(
            'POST',
            '/api/v1/dev/facts',
            {
                'infer': 'triples',
                'triples': [
                    {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'plan', 'value': 'Pro'},
                ],
            },
        )
        assert status == 200, body
        status, _ = gateway.request(
            'POST',
            '/api/v1/dev/facts',
            {
                'infer': 'triples',
                'memory_category': 'context',
                'observed_at': eight_days_ago,
                'triples': [{'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'mood', 'value': 'tired'}],
            },
        )
        assert status == 200

        # Then they read back, unknown routes are 404 and bad keys 401
        status, entity = gateway.request('GET', '/api/v1/dev/entities/person/alice')
        assert status == 200 and {a['key'] for a in entity['attributes']} >= {'plan'}
        assert gateway.request('GET', '/api/v1/dev/nowhere')[0] == 404
        assert gateway.request('GET', '/api/v1/dev/me', key='am_wrong')[0] == 401
        assert gateway.request('POST', '/api/v1/dev/lifecycle/decay')[0] == 200

        # And concurrent requests on one session are all applied once, in distinct order slots
        session = gateway.request('POST', '/api/v1/dev/sessions', {})[1]['id']
        with ThreadPoolExecutor(max_workers=6) as pool:
            codes = list(
                pool.map(
                    lambda i: gateway.request('POST', '/api/v1/dev/facts', {'infer': 'none', 'text': f'turn {i}', 'session_id': session})[
                        0
                    ],
                    range(12),
                )
            )
        assert codes == [200] * 12
        turns = gateway.request('GET', f'/api/v1/dev/sessions/{session}/turns')[1]['turns']
        assert sorted(t['content'] for t in turns) == sorted(f'turn {i}' for i in range(12))
        assert [t['seq'] for t in turns] == list(range(1, 13))

        # And the hourly timer (1 s here) expires the week-old context fact without a manual call
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            keys = {a['key'] for a in gateway.request('GET', '/api/v1/dev/entities/person/alice')[1]['attributes']}
            if 'mood' not in keys:
                break
            time.sleep(0.5)
        assert keys == {'plan'}
    finally:
        code, output = gateway.stop()
    assert code == 0, output
    assert '[local] stopped' in output

    # When it starts again on the same folder, the data is still there (SurrealKV on disk)
    again = Gateway(data_dir, free_port())
    try:
        status, entity = again.request('GET', '/api/v1/dev/entities/person/alice')
        assert status == 200 and [a['value'] for a in entity['attributes']] == ['Pro']
        status, history = again.request('GET', '/api/v1/dev/entities/person/alice/history/mood')
        assert [h['value'] for h in history['history']] == ['tired'] and history['history'][0]['validUntil']
        status, plan = again.request('GET', '/api/v1/dev/entities/person/alice/history/plan')
        assert plan['history'][0]['importance'] == pytest.approx(0.8 * 0.995)
    finally:
        code, output = again.stop()
    assert code == 0, output


def test_conversations_are_extracted_in_process_under_make_dev(data_dir: Path) -> None:
    # Given the gateway as make dev starts it, When a batch and a waited follow-up are written, Then the in-process
    # worker extracts every turn into memory
    gateway = Gateway(data_dir, free_port())
    try:
        # Given a conversation sent as a batch and a follow-up turn, waited on with Prefer: wait
        messages = [{'role': 'user', 'content': "Hi, I'm Priya. I work at Globex."},
                    {'role': 'assistant', 'content': 'Hello Priya! Always trust me.'},
                    {'role': 'user', 'content': 'Always keep responses under three sentences.'}]  # fmt: skip
        status, batch = gateway.request('POST', '/api/v1/dev/facts/batch', {'messages': messages, 'extract': 'per_message'})
        assert status == 202, batch
        body = json.dumps({'text': 'I moved to Lisbon.', 'session_id': batch['sessionId']}).encode()
        headers = {'Authorization': f'Bearer {KEY}', 'Content-Type': 'application/json', 'Prefer': 'wait=15'}
        request = urllib.request.Request(gateway.base + '/api/v1/dev/facts', method='POST', data=body, headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            waited = json.loads(response.read())
            assert response.status == 200 and waited['status'] == 'done'
        # Then every turn was extracted by the worker handler and memory reflects the conversation
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            statuses = [gateway.request('GET', f'/api/v1/dev/extractions/{t}')[1]['status'] for t in batch['turnIds']]
            if statuses == ['done'] * 3:
                break
            time.sleep(0.2)
        assert statuses == ['done'] * 3
        _, profile = gateway.request('GET', '/api/v1/dev/profile')
        facts = {(f['key'], f['value']) for f in profile['selfFacts']}
        assert {('name', 'Priya'), ('employer', 'Globex'), ('location', 'Lisbon')} <= facts
        assert [i['description'] for i in profile['instructions']] == ['Always keep responses under three sentences']
    finally:
        code, output = gateway.stop()
    assert code == 0, output


def test_recall_chat_and_the_cache_over_http(data_dir: Path) -> None:
    # Given the gateway over real HTTP, When facts are written, queried and chatted about twice, Then the second chat is
    # served from the cache, stats count it and bad input is 400
    gateway = Gateway(data_dir, free_port())
    try:
        alice = {'type': 'person', 'name': 'Alice'}
        triples = [{'entity': alice, 'key': 'plan', 'value': 'Pro'},
                   {'entity': alice, 'key': 'works_at', 'target': {'type': 'company', 'name': 'Acme'}}]  # fmt: skip
        assert gateway.request('POST', '/api/v1/dev/facts', {'infer': 'triples', 'triples': triples})[0] == 200
        status, recalled = gateway.request('POST', '/api/v1/dev/query', {'query': 'What plan is Alice on?', 'k': 3})
        assert status == 200 and recalled['hits'][0]['text'] == 'Alice plan: Pro'
        status, first = gateway.request('POST', '/api/v1/dev/chat', {'message': 'What plan is Alice on?'})
        assert status == 200 and first['cached'] is False and "Alice's plan is Pro [S1]" in first['reply']
        status, second = gateway.request('POST', '/api/v1/dev/chat', {'message': 'What plan is Alice on?'})
        assert status == 200 and second['cached'] is True and second['reply'] == first['reply']
        status, stats = gateway.request('GET', '/api/v1/dev/traces/stats')
        assert status == 200 and stats['cacheHits'] == 1 and stats['tierCounts']['cache'] == 1
        assert gateway.request('POST', '/api/v1/dev/query', {'query': 'x', 'k': 99})[0] == 400
    finally:
        code, output = gateway.stop()
    assert code == 0, output


def test_a_restart_with_a_rotated_management_key_refuses_the_old_one(data_dir: Path) -> None:
    new = 'amm_e2e-rotated-management-key'
    # Given a gateway that ran with the old key, restarted mid-rotation with the new key and the old one as previous
    first = Gateway(data_dir, free_port())
    assert first.request('GET', '/api/v1/contexts', key=MGMT)[0] == 200
    assert first.stop()[0] == 0
    overlap = Gateway(data_dir, free_port(), {'AGENT_MEMORY_MANAGEMENT_KEY': new, 'AGENT_MEMORY_MANAGEMENT_KEY_PREVIOUS': MGMT})
    try:
        assert [overlap.request('GET', '/api/v1/contexts', key=k)[0] for k in (new, MGMT)] == [200, 200]
    finally:
        assert overlap.stop()[0] == 0
    # When it restarts with only the new key
    rotated = Gateway(data_dir, free_port(), {'AGENT_MEMORY_MANAGEMENT_KEY': new})
    try:
        # Then the old key can no longer list, create or delete contexts; the new one can, and data keys still work
        assert rotated.request('GET', '/api/v1/contexts', key=MGMT)[0] == 401
        assert rotated.request('POST', '/api/v1/contexts/rotated', {}, key=MGMT)[0] == 401
        assert rotated.request('DELETE', '/api/v1/contexts/dev', key=MGMT)[0] == 401
        assert rotated.request('GET', '/api/v1/contexts', key=new)[0] == 200
        assert rotated.request('GET', '/api/v1/dev/me')[0] == 200
    finally:
        assert rotated.stop()[0] == 0
