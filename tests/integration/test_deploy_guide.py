"""docs/deploy.md agrees with the code: the secret it creates is what config reads, its parameter table is the
template's, and the database user level it relies on is a setting (the user itself runs in
tests/e2e/test_least_privilege_db_user.py)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import boto3
import pytest

from agent_memory.config import SECRET_KEYS, get_settings
from agent_memory.db.connection import Database
from local_runtime.template_routes import load_template_long_form
from tests.support.deploy_guide import parameter_rows, secret_json_format
from tests.support.handlers import ROOT


@pytest.fixture
def fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_the_guides_secret_is_read_in_full_by_config(fresh_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the secret as the guide builds it (its printf format, filled with generated values), in Secrets Manager
    values = ('a1' * 24, 'b2' * 32, 'amm_' + 'c3' * 24)
    secret = json.loads(secret_json_format() % values)
    assert set(secret) <= set(SECRET_KEYS)
    arn = boto3.client('secretsmanager').create_secret(Name=f'guide-{uuid.uuid4().hex}', SecretString=json.dumps(secret))['ARN']
    for variable in ('DB_PASSWORD', 'KEY_SECRET', 'MANAGEMENT_KEY'):
        monkeypatch.setenv(f'AGENT_MEMORY_{variable}', '')  # blank, as the template deploys them
    monkeypatch.setenv('AGENT_MEMORY_SECRET_ID', arn)
    # When the functions read their settings, Then every value comes from the secret
    settings = get_settings()
    assert (settings.db_password, settings.key_secret, settings.management_keys) == (values[0], values[1], (values[2],))
    # and the LLM key the guide adds later with put-secret-value is read too
    secret['llm_api_key'] = 'sk-guide'
    boto3.client('secretsmanager').put_secret_value(SecretId=arn, SecretString=json.dumps(secret))
    get_settings.cache_clear()
    assert get_settings().llm_api_key == 'sk-guide'


def test_the_guides_parameter_table_is_the_templates() -> None:
    # Given the template's parameters and the guide's table, When compared, Then each parameter is there once with its
    # default (required ones marked)
    parameters = load_template_long_form(ROOT / 'template.yaml')['Parameters']
    rows = parameter_rows()
    assert list(rows) == list(parameters)
    for name, spec in parameters.items():
        default = spec.get('Default')
        expected = '— (required)' if default is None else 'empty' if default == '' else f'`{default}`'
        assert rows[name] == expected, name


@pytest.mark.parametrize(('level', 'accepted'), [('root', True), ('namespace', True), ('NAMESPACE', True), ('database', False)])
def test_db_user_level_is_root_or_namespace(fresh_settings: None, monkeypatch: pytest.MonkeyPatch, level: str, accepted: bool) -> None:
    # Given AGENT_MEMORY_DB_USER_LEVEL, When settings are read, Then root and namespace are accepted and anything else
    # stops the cold start naming the variable (a database user cannot create the context databases)
    monkeypatch.setenv('AGENT_MEMORY_DB_USER_LEVEL', level)
    if accepted:
        assert get_settings().db_user_level == level.lower()
    else:
        with pytest.raises(RuntimeError, match='AGENT_MEMORY_DB_USER_LEVEL'):
            get_settings()


def test_db_user_level_defaults_to_root(fresh_settings: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv('AGENT_MEMORY_DB_USER_LEVEL', raising=False)
    assert get_settings().db_user_level == 'root'
    with pytest.raises(ValueError, match='user level'):
        Database('mem://', 'agent_memory', user_level='database')
