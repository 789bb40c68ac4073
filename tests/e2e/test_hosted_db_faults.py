"""The local gateway on a hosted database (ws:// through tests/support/ws_bridge.py, SurrealKV behind it) under faults.

The connection drops mid-run, the database restarts, stops, and stalls: the service reconnects by itself, answers
503 with Retry-After meanwhile (never hangs past its client timeout), and every acknowledged write is stored once.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from local_runtime.template_routes import http_routes, load_template
from tests.support.gateway import KEY, MGMT, ROOT, Gateway
from tests.support.ports import free_port
from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

DB_TIMEOUT_SECONDS = 4  # the service's database client timeout (cold-start migrations must fit); one test stalls longer
CLIENT_TIMEOUT_SECONDS = 20  # far above it: a request that hits this has hung
WRITE_ATTEMPTS = 10


class Hosted:
    def __init__(self, tmp: Path) -> None:
        self.bridge = WsBridge(f'surrealkv://{tmp / "hosted-db"}').start()
        self.gateway_dir = tmp / 'gateway'
        self.env = {
            'AGENT_MEMORY_DB_URL': self.bridge.url,
            'AGENT_MEMORY_DB_USER': ROOT_USER,
            'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD,
            'AGENT_MEMORY_DB_TIMEOUT_SECONDS': str(DB_TIMEOUT_SECONDS),
        }
        self.gateway = Gateway(self.gateway_dir, free_port(), self.env)

    def call(self, method: str, path: str, body: Any = None, *, key: str = KEY,
             headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:  # fmt: skip
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.gateway.base + path, data=data, method=method)
        request.add_header('Authorization', f'Bearer {key}')
        request.add_header('Content-Type', 'application/json')
        request.add_header('Accept', 'application/json, text/event-stream')
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=CLIENT_TIMEOUT_SECONDS) as response:
                raw = response.read()
                return response.status, _json(raw), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as error:
            return error.code, _json(error.read()), {k.lower(): v for k, v in error.headers.items()}

    def write_turn(self, session: str, text: str, idempotency_key: str) -> list[int]:
        """Write until acknowledged, as a client does: a 503 says Retry-After, the same Idempotency-Key is re-sent."""
        codes: list[int] = []
        for _ in range(WRITE_ATTEMPTS):
            code, _, headers = self.call('POST', '/api/v1/dev/facts', {'text': text, 'infer': 'none', 'sessionId': session},
                                         headers={'Idempotency-Key': idempotency_key})  # fmt: skip
            codes.append(code)
            if code != 503:
                return codes
            assert headers.get('retry-after'), headers
        return codes

    def open_session(self, session: str) -> None:
        code, body, _ = self.call('POST', '/api/v1/dev/sessions', {'id': session})
        assert code == 201, body

    def turns(self, session: str) -> list[str]:
        code, body, _ = self.call('GET', f'/api/v1/dev/sessions/{session}/turns', headers={})
        assert code == 200, body
        return [t['content'] for t in body['turns']]


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors='replace')


@pytest.fixture(scope='module')
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosted]:
    running = Hosted(tmp_path_factory.mktemp('hosted'))
    yield running
    code, output = running.gateway.stop()
    running.bridge.close()
    assert code == 0, output


def test_dropped_connections_are_rebuilt_and_every_acknowledged_write_is_stored_once(hosted: Hosted) -> None:
    # Given a run of writes while the database side keeps aborting the service's connection
    # When each write is retried after its 503s
    bridge, stop, drops = hosted.bridge, threading.Event(), [0]
    hosted.open_session('drops')

    def dropper() -> None:
        seen = bridge.frames
        while not stop.wait(0.002):
            if bridge.frames >= seen + 20:  # every few requests' round trips: between requests and in the middle of one
                bridge.drop_connections()
                drops[0] += 1
                seen = bridge.frames

    thread = threading.Thread(target=dropper)
    thread.start()
    outcomes: list[list[int]] = []
    try:  # at least 30 writes, and on until the connection was dropped 5 times (fewer frames a write, fewer drops)
        while (len(outcomes) < 30 or drops[0] < 5) and len(outcomes) < 100:  # GET turns returns 100
            i = len(outcomes)
            outcomes.append(hosted.write_turn('drops', f'note {i}', f'drop-{i}'))
    finally:
        stop.set()
        thread.join()
    # Then the service kept reconnecting: every write was acknowledged (after at most a few 503s)
    assert drops[0] >= 5
    assert all(codes[-1] == 200 for codes in outcomes), outcomes
    # and each is stored exactly once
    assert sorted(hosted.turns('drops')) == sorted(f'note {i}' for i in range(len(outcomes)))


def test_a_database_restart_mid_run_loses_no_acknowledged_write(hosted: Hosted) -> None:
    # Given writes before and after the database restarts (SurrealKV keeps its data; sessions are gone)
    # When each write is retried after its 503s
    hosted.open_session('restart')
    before = [hosted.write_turn('restart', f'before {i}', f'restart-a{i}') for i in range(5)]
    hosted.bridge.restart()
    after = [hosted.write_turn('restart', f'after {i}', f'restart-b{i}') for i in range(5)]
    # Then every write was acknowledged and is stored once
    assert all(codes[-1] == 200 for codes in before + after), (before, after)
    assert sorted(hosted.turns('restart')) == sorted([f'before {i}' for i in range(5)] + [f'after {i}' for i in range(5)])


def _every_route() -> list[tuple[str, str]]:
    """Each HTTP route of the template with its placeholders filled; the OpenAPI document needs no database."""
    routes = http_routes(load_template(ROOT / 'template.yaml'), ROOT)
    filled = [(r.method, re.sub(r'\{(\w+)\}', lambda m: 'dev' if m.group(1) == 'context_id' else 'x', r.path)) for r in routes]
    return [(method, path) for method, path in filled if not path.endswith('openapi.json')]


def test_with_the_database_down_every_route_answers_503_and_recovers_by_itself(hosted: Hosted) -> None:
    # Given the database stops listening
    hosted.open_session('down')
    hosted.bridge.stop()
    try:
        # When every route is called (a management route with the management key)
        for method, path in _every_route():
            key = MGMT if path.startswith('/api/v1/contexts') else KEY
            body = {'text': 'down note', 'infer': 'none', 'sessionId': 'down'} if method in ('POST', 'PUT', 'PATCH') else None
            code, problem, headers = hosted.call(method, path, body, key=key)
            # Then each answers 503 with Retry-After
            assert code == 503, (method, path, code, problem)
            assert headers.get('retry-after'), (method, path, headers)
    finally:
        hosted.bridge.start()
    # And the service recovers without a restart; the write refused while down was not stored
    assert hosted.call('GET', '/api/v1/health')[0] == 200
    assert hosted.write_turn('down', 'after the outage', 'down-after')[-1] == 200
    assert hosted.turns('down') == ['after the outage']


def test_a_stalled_database_answers_503_within_the_client_timeout_then_recovers(hosted: Hosted) -> None:
    # Given a database that holds every frame far longer than the service's client timeout
    hosted.bridge.delay_seconds = DB_TIMEOUT_SECONDS * 2.5
    try:
        # When a request needs it, it answers 503 instead of hanging (the test client would time out first)
        code, _, headers = hosted.call('GET', '/api/v1/dev/me')
        assert code == 503 and headers.get('retry-after')
    finally:
        hosted.bridge.delay_seconds = 0
    # Then, once the database answers again, so does the service
    assert hosted.call('GET', '/api/v1/dev/me')[0] == 200


CONTAINERS = 8
WRITES_EACH = 3


def test_eight_containers_superseding_one_key_leave_one_current_value_and_a_complete_chain(hosted: Hosted, tmp_path: Path) -> None:
    # Given eight facts containers (processes) on the hosted database, each superseding person/Zed's plan three times at once
    # When they all run and each contended write is retried
    secrets = json.loads((hosted.gateway_dir / 'local-secrets.json').read_text())
    env = {
        **os.environ,
        **hosted.env,
        'AGENT_MEMORY_KEY_SECRET': secrets['key_secret'],
        'PYTHONPATH': 'shared:infra:.',
        'AGENT_MEMORY_DB_TIMEOUT_SECONDS': '60',
    }  # eight cold starts sign in at once on two cores
    env.pop('AGENT_MEMORY_QUEUE_URL', None)
    go = tmp_path / 'go'
    containers = [
        subprocess.Popen(
            [
                sys.executable,
                '-m',
                'tests.support.facts_container',
                str(go),
                'dev',
                KEY,
                'Zed',
                'plan',
                *(f'c{n}-w{i}' for i in range(WRITES_EACH)),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for n in range(CONTAINERS)
    ]
    try:
        go.touch()
        # the last line: Powertools prints its metrics (EMF) on stdout too
        outcomes = [json.loads(c.communicate(timeout=300)[0].strip().splitlines()[-1]) for c in containers]
    finally:
        for container in containers:
            container.kill()
    # Then no request failed, and every write was accepted (a contended one after the retry its 503 asked for)
    statuses = [status for run in outcomes for _, status in run]
    assert set(statuses) <= {200, 503} and statuses.count(200) == CONTAINERS * WRITES_EACH, outcomes
    code, body, _ = hosted.call('GET', '/api/v1/dev/entities/person/Zed/history/plan')
    assert code == 200, body
    history: list[dict[str, Any]] = body['history']
    # and every accepted value is in the history exactly once
    assert sorted(h['value'] for h in history) == sorted(f'c{n}-w{i}' for n in range(CONTAINERS) for i in range(WRITES_EACH))
    # and exactly one is current
    current = [h for h in history if h['validUntil'] is None]
    assert len(current) == 1, current
    # and the chain from the current value back to the first is unbroken: each row supersedes exactly the one before
    by_id = {h['id']: h for h in history}
    chain: list[str] = []
    row: dict[str, Any] | None = current[0]
    while row is not None:
        chain.append(row['id'])
        previous = row['supersedes']
        if previous is not None:
            assert by_id[previous]['supersededBy'] == row['id']
        row = by_id.get(previous) if previous else None
    assert len(chain) == len(history)
