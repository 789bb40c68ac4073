"""The management API is rate-limited per management key (issue 30, "Also").

Every management request with a valid key takes a token from that key's bucket (in the control database, so the limit
holds across Lambda instances); an empty bucket is 429 with ``Retry-After``. A wrong key takes nothing (it is refused
first, 401) and a refused request changes nothing. The limits are deployment settings
(``AGENT_MEMORY_MANAGEMENT_REQUESTS_PER_MINUTE``, ``AGENT_MEMORY_MANAGEMENT_BURST``); the suite runs with a high one.
"""

from __future__ import annotations

import dataclasses
import uuid

import pytest

from agent_memory import config
from agent_memory.composition import Services
from tests.support.handlers import MANAGEMENT_KEY, Api, mgmt

BURST = 5


@pytest.fixture
def tight_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = dataclasses.replace(config.get_settings(), management_requests_per_minute=6, management_burst=BURST)
    monkeypatch.setattr(config, 'get_settings', lambda: settings)
    from agent_memory.domain import auth

    monkeypatch.setattr(auth, 'get_settings', lambda: settings)


def test_a_management_key_gets_429_past_its_burst_and_nothing_is_created(services: Services, tight_limit: None) -> None:
    services.control.db.query('control', 'DELETE rate_bucket;', {})  # a fresh bucket for this key
    # Given a burst of five, When six contexts are listed in a row, Then the sixth is 429 with Retry-After
    codes = [mgmt('GET', '')[0] for _ in range(BURST)]
    assert codes == [200] * BURST
    code, body, headers = Api('unused', MANAGEMENT_KEY).call('contexts', 'GET', '/api/v1/contexts')
    assert code == 429 and int(headers['Retry-After']) >= 1, body
    # And a create refused by the limit creates nothing
    cid = f'r{uuid.uuid4().hex[:12]}'
    assert mgmt('POST', f'/{cid}', {})[0] == 429
    assert services.control.get_context(cid) is None
    # And a wrong key is 401 and takes no token from anyone
    for _ in range(3):
        assert Api('unused', 'not-the-management-key').call('contexts', 'GET', '/api/v1/contexts')[0] == 401
