"""kill -9 of the local gateway during a burst of concurrent writes, then a restart on the same SurrealKV folder."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.gateway import KEY, MGMT, Gateway
from tests.support.ports import free_port

CLIENTS, WRITES_EACH = 8, 25
KILL_AFTER_ACKS = 80
STALE_SECONDS = 2  # how old an unfinished extraction must be before the (1 s) hourly sweep re-sends it
SETTLE_DEADLINE_SECONDS = 300  # generous: waits on a condition, this only bounds a broken run
REQUEST_TIMEOUT_SECONDS = 120  # a bound for a loaded CI box, not a measurement
EXTRACT_EVERY = 5  # one write in five is extracted (infer=full); the rest are stored as they are (infer=none)


def _post(gateway: Gateway, path: str, body: Any, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(gateway.base + path, data=json.dumps(body).encode(), method='POST')
    for name, value in {'Authorization': f'Bearer {KEY}', 'Content-Type': 'application/json', **headers}.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=REQUEST_TIMEOUT_SECONDS) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b'null')


def _write(gateway: Gateway, client: int, i: int) -> tuple[int, Any]:
    infer = 'full' if i % EXTRACT_EVERY == 0 else 'none'
    body = {'text': f'My favourite drink is tea {client}x{i}.', 'infer': infer, 'sessionId': f'burst-{client}'}
    return _post(gateway, '/api/v1/dev/facts', body, {'Idempotency-Key': f'burst-{client}-{i}'})


def test_kill_9_mid_burst_loses_no_acknowledged_write_and_strands_no_turn(tmp_path: Path) -> None:
    data_dir = tmp_path / 'data'
    env = {'AGENT_MEMORY_EXTRACTION_STALE_SECONDS': str(STALE_SECONDS)}
    gateway = Gateway(data_dir, free_port(), env)
    # ~450 requests in a few seconds: over the default rate limit's burst, which is not what this test is about
    assert gateway.request('PATCH', '/api/v1/contexts/dev', {'config': {'rate_limit': {'enabled': False}}}, key=MGMT)[0] == 200
    for client in range(CLIENTS):
        assert _post(gateway, '/api/v1/dev/sessions', {'id': f'burst-{client}'}, {})[0] == 201
    # Given 8 clients writing 200 turns at once, and a kill -9 once 80 are acknowledged
    acked: dict[tuple[int, int], str] = {}
    lock, killed = threading.Lock(), threading.Event()

    def client(n: int) -> None:
        for i in range(WRITES_EACH):
            try:
                code, body = _write(gateway, n, i)
            except (urllib.error.URLError, ConnectionError, TimeoutError, http.client.HTTPException):
                return  # the gateway is gone (a reply cut short too): the rest of this client's writes were never acknowledged
            assert code in (200, 202), (code, body)  # never a 5xx while it runs
            with lock:
                acked[(n, i)] = body['turnId']
                if len(acked) >= KILL_AFTER_ACKS and not killed.is_set():
                    killed.set()
                    gateway.kill()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert killed.is_set() and len(acked) < CLIENTS * WRITES_EACH
    before_restart = dict(acked)
    # When the gateway restarts on the same folder and clients re-send what was not acknowledged (same keys)
    gateway = Gateway(data_dir, free_port(), env)
    try:
        for n in range(CLIENTS):
            for i in range(WRITES_EACH):
                code, body = _write(gateway, n, i)
                assert code in (200, 202), (code, body)
                if (n, i) in before_restart:  # a replay returns the acknowledged turn, not a second one
                    assert body['turnId'] == before_restart[(n, i)]
                acked[(n, i)] = body['turnId']
        # Then every write is stored exactly once
        for n in range(CLIENTS):
            code, body = gateway.request('GET', f'/api/v1/dev/sessions/burst-{n}/turns')
            assert code == 200, body
            assert sorted(t['content'] for t in body['turns']) == sorted(f'My favourite drink is tea {n}x{i}.' for i in range(WRITES_EACH))
        # and no turn stays queued or running: the sweep re-sends what the killed process was holding
        deadline = time.monotonic() + SETTLE_DEADLINE_SECONDS
        pending = {turn for (_, i), turn in acked.items() if i % EXTRACT_EVERY == 0}
        while pending and time.monotonic() < deadline:
            pending = {t for t in pending if gateway.request('GET', f'/api/v1/dev/extractions/{t}')[1]['status'] not in ('done', 'failed')}
            time.sleep(0.5)
        assert not pending, f'{len(pending)} turns never finished extraction'
        # and /state is consistent: every current attribute's entity is a listed entity
        code, state = gateway.request('GET', '/api/v1/dev/state?limit=500')
        assert code == 200, state
        categories = [v for k, v in state.items() if k not in ('instructions', 'unknowns', 'truncated')]
        entities = {e['id'] for c in categories for e in c['entities']}
        attribute_entities = {a['entity'] for c in categories for a in c['attributes']}
        assert attribute_entities and attribute_entities <= entities
    finally:
        code, output = gateway.stop()
    assert code == 0, output


def test_after_a_kill_9_the_queued_extractions_are_resent_at_start(tmp_path: Path) -> None:
    """Issue 30, finding 12: the local queue lives in the process, so a kill -9 loses the jobs it held. The restarted
    gateway sends them again at once, not at the first hourly sweep (before: up to ~75 minutes later)."""
    data_dir = tmp_path / 'data'
    hung = socket.socket()
    hung.bind(('127.0.0.1', 0))
    hung.listen(64)  # accepts connections and never answers: the LLM stage of the first job hangs, the rest wait queued
    slow_llm = {'AGENT_MEMORY_LLM_BASE_URL': f'http://127.0.0.1:{hung.getsockname()[1]}/v1', 'AGENT_MEMORY_LLM_EXTRACTION_MODEL': 'm',
                'AGENT_MEMORY_LLM_TIMEOUT_SECONDS': '120', 'AGENT_MEMORY_SWEEP_HOURLY_SECONDS': '3600'}  # fmt: skip
    gateway = Gateway(data_dir, free_port(), slow_llm)
    try:
        # Given five turns accepted for extraction while the worker is stuck on the first
        turns = []
        for i in range(5):
            code, body = _post(gateway, '/api/v1/dev/facts', {'text': f'My favourite colour is shade {i}.'}, {})
            assert code == 202, body
            turns.append(body['turnId'])
        # When the gateway is killed with SIGKILL and restarted (no LLM; the hourly sweep an hour away)
        gateway.kill()
    finally:
        hung.close()
    gateway = Gateway(data_dir, free_port(), {'AGENT_MEMORY_SWEEP_HOURLY_SECONDS': '3600'})
    try:
        # Then every turn is extracted within a minute
        deadline = time.monotonic() + 60
        pending = set(turns)
        while pending and time.monotonic() < deadline:
            pending = {t for t in pending if gateway.request('GET', f'/api/v1/dev/extractions/{t}')[1]['status'] != 'done'}
            time.sleep(0.5)
        assert not pending, f'{len(pending)} of {len(turns)} turns still waiting for extraction after the restart'
    finally:
        code, output = gateway.stop()
    assert code == 0, output
