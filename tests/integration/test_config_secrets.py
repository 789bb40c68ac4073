"""Deployed functions read their secrets from AWS Secrets Manager at cold start (moto stands in for AWS)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import boto3
import pytest

from agent_memory.config import get_settings


@pytest.fixture
def fresh_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # AWS is the suite-wide moto mock started in tests/conftest.py
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_secret_values_override_the_environment(fresh_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a secret holding the three values and a blank environment, as the template deploys it
    arn = boto3.client('secretsmanager').create_secret(
        Name=f'agent-memory-{uuid.uuid4().hex}',
        SecretString=json.dumps({'db_password': 'pw', 'key_secret': 'hmac', 'management_key': 'mgmt'}),
    )['ARN']
    monkeypatch.setenv('AGENT_MEMORY_SECRET_ID', arn)
    monkeypatch.setenv('AGENT_MEMORY_DB_PASSWORD', '')
    monkeypatch.setenv('AGENT_MEMORY_KEY_SECRET', '')
    monkeypatch.setenv('AGENT_MEMORY_MANAGEMENT_KEY', '')
    # When settings are read
    settings = get_settings()
    # Then they come from the secret
    assert (settings.db_password, settings.key_secret, settings.management_key) == ('pw', 'hmac', 'mgmt')


def test_a_secret_without_key_secret_fails_loudly(fresh_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a Secrets Manager secret without key_secret and no env fallback, When settings are read, Then start-up fails
    # naming key_secret
    arn = boto3.client('secretsmanager').create_secret(Name=f'partial-{uuid.uuid4().hex}', SecretString=json.dumps({'db_password': 'pw'}))[
        'ARN'
    ]
    monkeypatch.setenv('AGENT_MEMORY_SECRET_ID', arn)
    monkeypatch.setenv('AGENT_MEMORY_KEY_SECRET', '')
    with pytest.raises(RuntimeError, match='key_secret'):
        get_settings()


def test_a_non_json_secret_is_rejected(fresh_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a secret that is a plain string, When settings are read, Then start-up fails asking for a JSON object
    arn = boto3.client('secretsmanager').create_secret(Name=f'plain-{uuid.uuid4().hex}', SecretString='"just a string"')['ARN']
    monkeypatch.setenv('AGENT_MEMORY_SECRET_ID', arn)
    with pytest.raises(RuntimeError, match='JSON object'):
        get_settings()
