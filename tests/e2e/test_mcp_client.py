"""The MCP endpoint driven by the official SDK's own client over real HTTP against the local gateway.

Both protocol eras the SDK speaks are exercised: ``auto`` negotiates the stateless 2026-07-28 protocol through
``server/discover``; ``legacy`` does the 2025 ``initialize`` handshake. The gateway runs the extraction worker
in-process, so ``remember`` with ``infer: full`` comes back with what was extracted.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.support.gateway import KEY, Gateway

MODES = {'auto': '2026-07-28', 'legacy': '2025-11-25'}
EMPLOYER = {'auto': 'Initech', 'legacy': 'Globex'}  # one gateway serves both modes: each writes something new


@asynccontextmanager
async def connect(gateway: Gateway, mode: str, key: str = KEY, **headers: str) -> AsyncIterator[Client]:
    http = httpx2.AsyncClient(headers={'Authorization': f'Bearer {key}', **headers}, timeout=60)
    async with http, Client(streamable_http_client(f'{gateway.base}/mcp', http_client=http), mode=mode) as client:  # type: ignore[arg-type]
        yield client


def run(coroutine: Any) -> Any:
    return anyio.run(lambda: coroutine)


@pytest.mark.parametrize('mode', list(MODES))
def test_sdk_client_lists_and_calls_every_tool(gateway: Gateway, mode: str) -> None:
    # Given the official MCP SDK client against the gateway, When it lists tools and calls each one, Then the tools,
    # schemas and results are as documented
    employer = EMPLOYER[mode]

    async def scenario() -> dict[str, Any]:
        async with connect(gateway, mode) as client:
            seen: dict[str, Any] = {'protocol': client.protocol_version}
            seen['tools'] = {t.name: t for t in (await client.list_tools()).tools}
            for name, arguments in (
                ('remember', {'text': f'My name is Ada and I work at {employer} as a pilot.'}),
                ('recall', {'query': 'Where does Ada work?', 'k': 5}),
                ('context', {'query': 'Ada'}),
                ('reflect', {'query': 'What do we know about Ada?'}),
                ('forget', {'query': f'Ada works at {employer}', 'dry_run': True}),
                ('inspect', {'ref': f'entity:organisation/{employer.lower()}'}),
            ):
                seen[name] = await client.call_tool(name, arguments)
            return seen

    seen = run(scenario())
    assert seen['protocol'] == MODES[mode]
    assert set(seen['tools']) == {'remember', 'recall', 'context', 'reflect', 'forget', 'inspect'}
    assert seen['tools']['recall'].input_schema['properties']['k']['maximum'] == 50
    for name in ('remember', 'recall', 'context', 'reflect', 'forget', 'inspect'):
        assert seen[name].is_error is False, (name, seen[name])
    remembered = seen['remember'].structured_content
    assert remembered['status'] == 'done' and remembered['traceId'] == remembered['turnId']  # the in-process worker ran
    assert ('employer', employer) in {(a['key'], a['value']) for a in remembered['extraction']['attributes']}
    assert any(employer in h['text'] for h in seen['recall'].structured_content['hits'])
    assert json.loads(seen['recall'].content[0].text) == seen['recall'].structured_content
    assert seen['context'].content[0].text == seen['context'].structured_content['context'] and 'Ada' in seen['context'].content[0].text
    assert seen['reflect'].structured_content['reflection']
    assert seen['forget'].structured_content['dryRun'] is True
    assert seen['inspect'].structured_content['entity']['name'] == employer


@pytest.mark.parametrize('mode', list(MODES))
def test_sdk_client_sees_the_error_model(gateway: Gateway, mode: str) -> None:
    # Given the SDK client, When it calls a missing ref, an oversized k, an unknown tool and another context, Then each
    # error arrives in the documented form
    async def scenario() -> dict[str, Any]:
        async with connect(gateway, mode) as client:
            seen: dict[str, Any] = {'missing': await client.call_tool('inspect', {'ref': 'entity:person/nobody'})}
            for name, tool, arguments in (('oversized', 'recall', {'query': 'x', 'k': 500}), ('unknown', 'upload', {})):
                try:
                    await client.call_tool(tool, arguments)
                except MCPError as error:
                    seen[name] = error
            seen['wrong_context'] = await client.call_tool('recall', {'query': 'x', 'context_id': 'elsewhere'})
            return seen

    seen = run(scenario())
    assert seen['missing'].is_error is True
    assert seen['missing'].structured_content['error'] == {'status': 404, 'title': 'Not found', 'message': 'entity not found'}
    assert seen['oversized'].code == -32602 and 'less than or equal to 50' in seen['oversized'].message
    assert seen['unknown'].code == -32601
    assert seen['wrong_context'].is_error is True and seen['wrong_context'].structured_content['error']['status'] == 401


def test_sdk_client_with_a_bad_key_is_refused(gateway: Gateway) -> None:
    # Given a bad key, When the SDK client connects, Then it is refused with an HTTP 401 problem
    async def scenario() -> None:
        async with connect(gateway, 'auto', key='am_wrong') as client:
            await client.list_tools()

    with pytest.raises(BaseExceptionGroup) as refused:  # the SDK surfaces the HTTP 401 from its transport task group
        run(scenario())
    assert refused.group_contains(MCPError)
    status, body = gateway.request('POST', '/mcp', {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}, key='am_wrong')
    assert status == 401 and body['status'] == 401
