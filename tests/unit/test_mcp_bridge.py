"""The API Gateway event → SDK Streamable-HTTP bridge on its own, with a bare low-level MCP server."""

from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from agent_memory.mcp_server.http_bridge import asgi_scope, event_body, serve_event
from local_runtime.events import http_event

ACCEPT = 'application/json, text/event-stream'


# Far beyond any budget below: a tool that naps this long has, for the test, never answered. Only a broken budget
# lets the nap end, and then the test fails with "slept 120.0" instead of hanging the suite.
NEVER = 120.0


def _server(delay: float) -> Server[Any]:
    async def call(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        await anyio.sleep(delay)
        return types.CallToolResult(content=[types.TextContent(text=f'slept {delay}')])

    return Server('bridge-test', on_call_tool=call)


def _event(message: dict[str, Any], base64_body: bool = False) -> dict[str, Any]:
    raw = json.dumps(message).encode()
    return http_event('POST', '/mcp', body=raw if base64_body else raw.decode(), headers={'Accept': ACCEPT, 'X-Extra': 'v'}, query='a=1')


CALL = {'jsonrpc': '2.0', 'id': 3, 'method': 'tools/call', 'params': {'name': 'nap', 'arguments': {}}}


def test_an_event_becomes_an_asgi_http_scope() -> None:
    # Given a base64 API Gateway event, When it becomes an ASGI scope, Then method, path, query, headers and body carry
    # over
    event = _event(CALL, base64_body=True)
    scope = asgi_scope(event)
    assert (scope['type'], scope['method'], scope['path'], scope['query_string']) == ('http', 'POST', '/mcp', b'a=1')
    assert (b'x-extra', b'v') in scope['headers'] and (b'accept', ACCEPT.encode()) in scope['headers']
    assert event['isBase64Encoded'] is True and json.loads(event_body(event)) == CALL
    assert base64.b64decode(event['body']) == event_body(event)


def test_header_values_beyond_latin_1_reach_the_sdk_as_utf8() -> None:
    # Given a header value no latin-1 codec can carry, When the event becomes an ASGI scope
    event = http_event('POST', '/mcp', body='{}', headers={'X-Client-Name': 'café € 日本'})
    scope = asgi_scope(event)
    # Then the SDK sees exactly the client's text, UTF-8 encoded
    assert dict(scope['headers'])[b'x-client-name'].decode('utf-8') == 'café € 日本'


def test_the_sdk_answer_comes_back_as_status_headers_and_body() -> None:
    # Given a tool that answers at once, When a call is bridged, Then the SDK's status, headers and JSON body come back
    answer = serve_event(_server(0.0), _event(CALL), 1_000_000, timeout_seconds=10)
    assert answer.status == 200 and answer.headers['content-type'] == 'application/json'
    body = json.loads(answer.body)
    assert body['id'] == 3 and body['result']['content'][0]['text'] == 'slept 0.0'


def test_a_request_the_sdk_never_answers_is_a_504_not_a_hang() -> None:
    # Given a tool that never answers, When a call to it is bridged with a 0.5 s budget
    answer = serve_event(_server(NEVER), _event(CALL), 1_000_000, timeout_seconds=0.5)
    # Then the bridge gives up with a JSON-RPC error and a 504
    assert answer.status == 504
    assert json.loads(answer.body) == {'jsonrpc': '2.0', 'id': None, 'error': {'code': -32603, 'message': 'no answer within 0.5 s'}}


def test_an_oversized_body_is_refused_by_the_transport() -> None:
    # Given a body over the limit, When bridged, Then the transport refuses it with 413
    big = {**CALL, 'params': {'name': 'nap', 'arguments': {'pad': 'x' * 5000}}}
    assert serve_event(_server(0.0), _event(big), 1000, timeout_seconds=10).status == 413
