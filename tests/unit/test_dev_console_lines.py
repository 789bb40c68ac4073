"""The request line of `make dev` (local_runtime.console) on its own."""

from __future__ import annotations

import errno
import json

from local_runtime.console import bind_failure, request_line

JSON = {'content-type': 'application/json'}
SSE = {'content-type': 'text/event-stream'}


def _sse(done: dict[str, object]) -> bytes:
    return f'data: {json.dumps({"delta": "Hi"})}\n\ndata: {json.dumps({"done": True, **done})}\n\n'.encode()


def test_chat_cache_outcome_from_json_and_from_the_final_event() -> None:
    assert request_line('POST', '/api/v1/c/chat', 200, 3.14159, 'c', JSON, b'{"cached": true}').endswith(' 3.1 ms ctx=c cache=hit')
    assert request_line('POST', '/api/v1/c/chat', 200, 2, 'c', SSE, _sse({'cached': False})).endswith(' ctx=c cache=miss')


def test_no_cache_field_where_there_is_no_cache_outcome() -> None:
    assert request_line('POST', '/api/v1/c/chat', 400, 1, 'c', JSON, b'{"cached": true}').endswith('400 1.0 ms ctx=c')
    assert request_line('POST', '/api/v1/c/chat', 200, 1, 'c', JSON, b'not json').endswith(' ctx=c')
    assert request_line('POST', '/api/v1/c/query', 200, 1, 'c', JSON, b'{"cached": true}').endswith(' ctx=c')


def test_query_string_is_never_printed() -> None:
    line = request_line('GET', '/api/v1/c/traces?cursor=secret-ish', 200, 1, 'c', JSON, b'{}')
    assert 'secret-ish' not in line and ' GET /api/v1/c/traces 200 ' in line


def test_bind_failures_name_the_fix() -> None:
    assert 'PORT=<free port>' in bind_failure(OSError(errno.EADDRINUSE, 'Address already in use'), '127.0.0.1', 3000)
    assert 'above 1023' in bind_failure(OSError(errno.EACCES, 'Permission denied'), '0.0.0.0', 80)
