"""JSON-RPC to the MCP function through its Lambda handler, as API Gateway v2 events."""

from __future__ import annotations

import json
from typing import Any

from local_runtime.events import LocalContext, http_event
from tests.support.handlers import load_function

ACCEPT = 'application/json, text/event-stream'


def rpc_raw(key: str | None, message: Any, headers: dict[str, str] | None = None, method: str = 'POST') -> dict[str, Any]:
    """The handler's raw result for ``message`` (a dict, raw text, or None for no body)."""
    all_headers = {'accept': ACCEPT, **({'authorization': f'Bearer {key}'} if key else {}), **(headers or {})}
    body = message if isinstance(message, str) or message is None else json.dumps(message)
    event = http_event(method, '/mcp', route_key=f'{method} /mcp', body=body, headers=all_headers)
    result: dict[str, Any] = load_function('mcp').lambda_handler(event, LocalContext(function_name='mcp'))
    return result


def rpc(key: str, method: str, params: dict[str, Any] | None = None, **headers: str) -> dict[str, Any]:
    """A JSON-RPC call that must come back as HTTP 200 with the request's id; returns the JSON-RPC answer."""
    result = rpc_raw(key, {'jsonrpc': '2.0', 'id': 7, 'method': method, **({'params': params} if params is not None else {})}, headers)
    assert result['statusCode'] == 200, result
    answer: dict[str, Any] = json.loads(result['body'])
    assert answer['jsonrpc'] == '2.0' and answer['id'] == 7
    return answer
