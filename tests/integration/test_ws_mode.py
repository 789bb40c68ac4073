"""The ws test mode (``AGENT_MEMORY_TEST_DB=ws``, run by ``make unit-ws``) really talks to the database over ws://."""

from __future__ import annotations

import time

import pytest

from agent_memory.composition import Services
from tests.support.environment import WS_BRIDGE
from tests.support.handlers import Api

pytestmark = pytest.mark.skipif(WS_BRIDGE is None, reason='runs in the ws test mode: AGENT_MEMORY_TEST_DB=ws')


def test_requests_reach_the_engine_through_the_ws_bridge(services: Services, api: Api) -> None:
    # Given the ws test mode, When a request is served, Then the service's connection is the bridge's URL and frames
    # went through it
    assert WS_BRIDGE is not None
    before = WS_BRIDGE.frames
    assert api.call('views', 'GET', '/me')[0] == 200
    assert services.db.url == WS_BRIDGE.url and WS_BRIDGE.frames > before


def test_a_connection_dropped_while_warm_is_rebuilt_before_the_next_request(services: Services, api: Api) -> None:
    assert WS_BRIDGE is not None
    # Given a warm process whose connection the database side dropped between requests
    WS_BRIDGE.drop_connections()
    deadline = time.monotonic() + 10
    while services.db._conn.socket.state.name == 'OPEN' and time.monotonic() < deadline:  # the client notices the drop
        time.sleep(0.01)
    # When the next request comes, Then it is served (no 503: nothing was in flight, so reconnecting is safe)
    assert api.call('views', 'GET', '/me')[0] == 200
