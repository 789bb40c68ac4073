"""Serve one API Gateway HTTP API (payload v2) request with the SDK's Streamable-HTTP transport.

The SDK's transport is an ASGI application. A Lambda invocation is one request, so each invocation runs a fresh
stateless session manager (a few objects; the ``Server`` with its tools is built once per cold start) in its own
event loop, feeds it the event as an ASGI ``http`` scope and collects the response. ``json_response`` makes every
answer a single JSON body, which is what a buffered Lambda response can carry.
"""

from __future__ import annotations

import base64
import json
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

import anyio

from agent_memory.mcp_server.sdk import Server, StreamableHTTPSessionManager


@dataclass
class HttpAnswer:
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)


def event_body(event: dict[str, Any]) -> bytes:
    raw = event.get('body') or ''
    return base64.b64decode(raw) if event.get('isBase64Encoded') else raw.encode()


def asgi_scope(event: dict[str, Any]) -> dict[str, Any]:
    http = event['requestContext']['http']
    # API Gateway hands header values over as text; UTF-8 keeps any byte a client sent (latin-1 would refuse most)
    headers = [(k.lower().encode(), str(v).encode()) for k, v in (event.get('headers') or {}).items()]
    return {
        'type': 'http',
        'asgi': {'version': '3.0', 'spec_version': '2.3'},
        'http_version': '1.1',
        'method': http['method'],
        'scheme': 'https',
        'path': event['rawPath'],
        'raw_path': event['rawPath'].encode(),
        'query_string': (event.get('rawQueryString') or '').encode(),
        'root_path': '',
        'headers': headers,
        'client': (http.get('sourceIp') or '0.0.0.0', 0),
        'server': (event['requestContext'].get('domainName') or 'localhost', 443),
        'state': {},
    }


async def _serve(server: Server[Any], event: dict[str, Any], max_body_bytes: int) -> HttpAnswer:
    answer = HttpAnswer()
    pending = [{'type': 'http.request', 'body': event_body(event), 'more_body': False}]
    finished = anyio.Event()

    async def receive() -> dict[str, Any]:
        if pending:
            return pending.pop()
        await finished.wait()  # the body was delivered whole; the "client" disconnects once the answer is sent
        return {'type': 'http.disconnect'}

    async def send(message: MutableMapping[str, Any]) -> None:
        if message['type'] == 'http.response.start':
            answer.status = message['status']
            answer.headers = {k.decode('latin-1'): v.decode('latin-1') for k, v in message.get('headers', [])}
        elif message['type'] == 'http.response.body':
            answer.body.extend(message.get('body', b''))
            if not message.get('more_body'):
                finished.set()

    manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True, max_request_body_size=max_body_bytes)
    async with manager.run():
        await manager.handle_request(asgi_scope(event), receive, send)
    return answer


def serve_event(server: Server[Any], event: dict[str, Any], max_body_bytes: int, timeout_seconds: float) -> HttpAnswer:
    """The answer, or a JSON-RPC internal error with 504 if the SDK has not answered in time (never a hang)."""

    async def bounded() -> HttpAnswer:
        with anyio.fail_after(timeout_seconds):
            return await _serve(server, event, max_body_bytes)

    try:
        return anyio.run(bounded)
    except TimeoutError:
        error = {'jsonrpc': '2.0', 'id': None, 'error': {'code': -32603, 'message': f'no answer within {timeout_seconds:g} s'}}
        return HttpAnswer(504, {'content-type': 'application/json'}, bytearray(json.dumps(error).encode()))
