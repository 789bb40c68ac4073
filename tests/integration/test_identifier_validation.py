"""Identifiers are validated with full matches (issue 12, hole 11): `re.match` with `$` accepts a trailing newline.

Path parameters arrive decoded (API Gateway and the local gateway turn `dev%0A` into "dev\\n"), so the events
here carry them the same way.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.domain.auth import check_context_id
from agent_memory.domain.scopes import normalise_path
from agent_memory.domain.tenancy import check_key_name
from agent_memory.errors import BadRequest, Unprocessable
from local_runtime.events import LocalContext, http_event
from tests.support.handlers import MANAGEMENT_KEY, Api, load_function


def management_call(method: str, path: str, params: dict[str, str], body: Any = None) -> tuple[int, Any]:
    event = http_event(method, path, path_parameters=params, body=body, headers={'authorization': f'Bearer {MANAGEMENT_KEY}'})
    result = load_function('contexts').lambda_handler(event, LocalContext())
    return result['statusCode'], json.loads(result['body']) if result.get('body') else None


def control_rows(services: Services, table: str) -> list[Any]:
    return list(services.db.query('control', f'SELECT * FROM {table} ORDER BY id;')[0] or [])


def test_a_context_id_with_a_trailing_newline_is_422_and_creates_nothing(services: Services) -> None:
    # Given a context id ending in a newline, When it is created, Then it is 422 and no context row appears
    before = control_rows(services, 'context')
    code, body = management_call('POST', '/api/v1/contexts/dev%0A', {'context_id': 'dev\n'}, {})
    assert code == 422, body
    assert control_rows(services, 'context') == before


def test_a_key_name_with_a_trailing_newline_is_400_and_mints_nothing(services: Services, context_id: str) -> None:
    # Given a key name ending in a newline, When it is minted through management, Then it is 400 and no key row appears
    before = control_rows(services, 'api_key')
    code, body = management_call(
        'POST',
        f'/api/v1/contexts/{context_id}/principals/admin/keys/nl%0A',
        {'context_id': context_id, 'principal_id': 'admin', 'name': 'nl\n'},
    )
    assert code == 400, body
    assert control_rows(services, 'api_key') == before


def test_a_self_service_key_name_with_a_trailing_newline_is_400(services: Services, api: Api) -> None:
    # Given a key name ending in a newline, When it is minted through self-service, Then it is 400 and no key row
    # appears
    before = control_rows(services, 'api_key')
    code, body, _ = api.call('keys', 'POST', '/keys', {'name': 'nl\n'})
    assert code == 400, body
    assert control_rows(services, 'api_key') == before


def test_a_scope_segment_with_a_newline_is_400_and_writes_nothing(services: Services, api: Api) -> None:
    # Given a scope segment holding a newline, When a session is created with it, Then it is 400 and no session exists
    code, body, _ = api.call('sessions', 'POST', '/sessions', {'id': 's1', 'scopes': [['team\n/a']]})
    assert code == 400, body
    assert services.db.query(services.store(api.context_id).database, 'SELECT * FROM session;')[0] == []


@pytest.mark.parametrize(
    ('check', 'value', 'error'),
    [(check_context_id, 'dev\n', Unprocessable), (check_key_name, 'nl\n', BadRequest), (normalise_path, 'team\n/a', BadRequest)],
)
def test_every_identifier_check_refuses_a_trailing_newline(check: Any, value: str, error: type[Exception]) -> None:
    # Given each identifier check, When a value ends in a newline, Then it raises its error (a full match, not a prefix
    # match)
    with pytest.raises(error):
        check(value)
