"""Management key rotation (issue 12, hole 4): the configured keys are authoritative at every cold start.

A cold start here is what a new Lambda container does: settings are read again and the services started on the
same database, as a new container beside the warm ones would. The handlers keep running on the warm container's
services, so the tests also show that warm containers refuse a revoked key (they authenticate against the database).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator

import boto3
import pytest

from agent_memory.composition import get_services, start_services
from agent_memory.config import get_settings
from agent_memory.db.connection import get_database
from tests.support.handlers import MANAGEMENT_KEY, Api

ColdStart = Callable[..., None]


def _restart() -> None:
    get_settings.cache_clear()
    start_services(get_database(), get_settings())


@pytest.fixture
def cold_start(monkeypatch: pytest.MonkeyPatch) -> Iterator[ColdStart]:
    def restart(current: str, previous: str = '', secret_id: str = '') -> None:
        monkeypatch.setenv('AGENT_MEMORY_MANAGEMENT_KEY', current)
        monkeypatch.setenv('AGENT_MEMORY_MANAGEMENT_KEY_PREVIOUS', previous)
        monkeypatch.setenv('AGENT_MEMORY_SECRET_ID', secret_id)
        _restart()

    yield restart
    monkeypatch.undo()
    _restart()  # back to the suite's management key


def can_manage(key: str) -> int:
    code, _, _ = Api('unused', key).call('contexts', 'GET', '/api/v1/contexts')
    return code


def test_a_key_no_longer_configured_is_refused_after_the_next_cold_start(cold_start: ColdStart) -> None:
    # Given the service ran with the suite's key, which works
    assert can_manage(MANAGEMENT_KEY) == 200
    # When it restarts with a new key only
    cold_start('amm_rotated-' + uuid.uuid4().hex)
    # Then the old key is refused everywhere and the new one works
    assert can_manage(MANAGEMENT_KEY) == 401
    assert can_manage(get_settings().management_key or '') == 200


def test_an_explicit_overlap_keeps_both_keys_until_the_previous_one_is_dropped(cold_start: ColdStart) -> None:
    new = 'amm_new-' + uuid.uuid4().hex
    # Given a rotation in progress: the new key is current, the old one is listed as previous
    cold_start(new, previous=MANAGEMENT_KEY)
    # Then both keys manage contexts (clients can switch without downtime)
    assert (can_manage(new), can_manage(MANAGEMENT_KEY)) == (200, 200)
    # When the overlap ends (the next deployment configures only the new key)
    cold_start(new)
    # Then only the new key works
    assert (can_manage(new), can_manage(MANAGEMENT_KEY)) == (200, 401)


def test_several_previous_keys_may_overlap_as_a_comma_list(cold_start: ColdStart) -> None:
    # Given a cold start with a new key and two previous ones as a comma list, When each key manages, Then the listed
    # ones work and the old default does not
    a, b = 'amm_a-' + uuid.uuid4().hex, 'amm_b-' + uuid.uuid4().hex
    cold_start('amm_current-' + uuid.uuid4().hex, previous=f' {a}, {b} ,')
    assert (can_manage(a), can_manage(b), can_manage(MANAGEMENT_KEY)) == (200, 200, 401)


def test_no_configured_key_means_no_management_access(cold_start: ColdStart) -> None:
    # Given a cold start with no management key configured, When the old key manages, Then it is 401 and no key row
    # remains
    cold_start('')
    assert can_manage(MANAGEMENT_KEY) == 401
    rows = get_services().db.query('control', 'SELECT VALUE id FROM management_key;')[0]
    assert rows == []


def test_rotating_the_secret_value_in_aws_revokes_the_old_key(cold_start: ColdStart) -> None:
    # Given the AWS shape: the keys live in the Secrets Manager secret (moto), the environment is blank
    secrets = boto3.client('secretsmanager')
    old, new = 'amm_old-' + uuid.uuid4().hex, 'amm_new-' + uuid.uuid4().hex
    arn = secrets.create_secret(
        Name=f'am-{uuid.uuid4().hex}', SecretString=json.dumps({'key_secret': 'test-key-secret', 'management_key': old})
    )['ARN']
    cold_start('', secret_id=arn)
    assert can_manage(old) == 200
    # When the secret is rotated with an overlap, then without it, each followed by a cold start
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({'key_secret': 'test-key-secret', 'management_key': new,
                                                                    'management_key_previous': old}))  # fmt: skip
    cold_start('', secret_id=arn)
    assert (can_manage(old), can_manage(new)) == (200, 200)
    secrets.put_secret_value(SecretId=arn, SecretString=json.dumps({'key_secret': 'test-key-secret', 'management_key': new}))
    cold_start('', secret_id=arn)
    # Then the old key is refused
    assert (can_manage(old), can_manage(new)) == (401, 200)
