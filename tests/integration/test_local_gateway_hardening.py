"""The local gateway never hangs or drops a request (issue 12, hole 13).

A bad `Content-Length` gets a 400/413 at once instead of a thread blocked reading; metrics flushed concurrently by
request threads and the in-process worker never make a request die without a response.
"""

from __future__ import annotations

import io
import json
import socket
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.observability import metrics
from local_runtime.events import LocalContext
from local_runtime.gateway import HandlerRegistry, make_server
from local_runtime.template_routes import http_routes, load_template
from tests.support.handlers import ROOT, Api

HANG_GUARD_SECONDS = 20  # only bounds a hang; a healthy answer takes milliseconds


@pytest.fixture(scope='module')
def gateway() -> Iterator[tuple[str, int]]:
    routes = http_routes(load_template(ROOT / 'template.yaml'), ROOT)
    server = make_server('127.0.0.1', 0, routes, HandlerRegistry())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[0], server.server_address[1]
    server.shutdown()
    server.server_close()


def raw_request(address: tuple[str, int], request: bytes) -> tuple[int, bytes]:
    with socket.create_connection(address, timeout=HANG_GUARD_SECONDS) as conn:
        conn.sendall(request)
        reply = b''
        while b'\r\n\r\n' not in reply:
            chunk = conn.recv(65536)
            if not chunk:
                break
            reply += chunk
    status_line = reply.split(b'\r\n', 1)[0]
    return int(status_line.split()[1]), reply


def post_with_length(api: Api, length: str, body: bytes = b'{"id": "s1"}') -> bytes:
    return (f'POST /api/v1/{api.context_id}/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {api.key}\r\n'
            f'Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n').encode() + body  # fmt: skip


@pytest.mark.parametrize(('length', 'status'), [('-1', 400), ('abc', 400), ('1e3', 400), ('12, 12', 400), (str(10**30), 400),
                                                 (str(10**12), 413)])  # fmt: skip
def test_a_bad_content_length_is_answered_at_once_and_writes_nothing(
    gateway: tuple[str, int], services: Services, api: Api, length: str, status: int
) -> None:
    # Given a request with a bad Content-Length, When the local gateway reads it, Then it answers its status at once and
    # no session exists
    code, reply = raw_request(gateway, post_with_length(api, length))
    assert code == status, reply
    assert services.db.query(services.store(api.context_id).database, 'SELECT * FROM session;')[0] == []


def test_a_chunked_body_is_411_and_writes_nothing(gateway: tuple[str, int], services: Services, api: Api) -> None:
    # Given a chunked body, When the local gateway reads it, Then it is 411 and no session exists
    request = (f'POST /api/v1/{api.context_id}/sessions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {api.key}\r\n'
               'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nc\r\n{"id": "s1"}\r\n0\r\n\r\n').encode()  # fmt: skip
    code, reply = raw_request(gateway, request)
    assert code == 411, reply
    assert services.db.query(services.store(api.context_id).database, 'SELECT * FROM session;')[0] == []


def test_a_good_content_length_still_works(gateway: tuple[str, int], api: Api) -> None:
    # Given a correct Content-Length, When the session is created through the gateway, Then it is 201
    body = b'{"id": "s1"}'
    code, reply = raw_request(gateway, post_with_length(api, str(len(body)), body))
    assert code == 201, reply


class _Lines(io.TextIOBase):
    """A stdout that keeps every EMF line printed while several threads flush."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            self.text.append(s)
        return len(s)


def test_concurrent_metric_flushes_lose_and_break_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given handlers decorated like every function (one process-wide Metrics), run on 8 threads at once
    @metrics.log_metrics
    # When the metrics of all invocations are flushed concurrently
    def handler(event: dict[str, Any], context: Any) -> int:
        metrics.add_metric(name='ConcurrencyProbe', unit='Count', value=1)
        return 1

    out = _Lines()
    monkeypatch.setattr('sys.stdout', out)
    monkeypatch.delenv('POWERTOOLS_METRICS_DISABLED', raising=False)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible, so interleavings rare in production show up
    invocations = 8000
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = list(pool.map(lambda _: _safe(handler), range(invocations)))
    finally:
        sys.setswitchinterval(interval)
    # Then no invocation failed and every metric was emitted exactly once
    failures = [o for o in outcomes if o != 1]
    assert failures == []
    emitted = 0
    for line in ''.join(out.text).splitlines():
        if line.strip():
            blob = json.loads(line)
            value = blob.get('ConcurrencyProbe', 0)
            emitted += sum(value) if isinstance(value, list) else value
    assert emitted == invocations


def _safe(handler: Any) -> Any:
    try:
        return handler({}, LocalContext())
    except Exception as exc:  # the test reports failures instead of stopping at the first
        return repr(exc)


def test_two_content_lengths_are_400_and_write_nothing(gateway: tuple[str, int], services: Services, api: Api) -> None:
    # Which one frames the body is ambiguous (a smuggling vector): the bytes past the first are another request
    # Given two Content-Length headers, When the gateway reads the request, Then it is 400 and no session exists
    smuggled = f'GET /api/v1/{api.context_id}/me HTTP/1.1\r\nHost: x\r\n\r\n'
    body = b'{"id": "s1"}'
    request = post_with_length(api, f'{len(body)}\r\nContent-Length: {len(body) + len(smuggled)}', body + smuggled.encode())
    code, reply = raw_request(gateway, request)
    assert code == 400, reply
    assert services.db.query(services.store(api.context_id).database, 'SELECT * FROM session;')[0] == []
