"""What `make dev` prints: one line per request, and one-line reasons instead of tracebacks when it cannot start."""

from __future__ import annotations

import errno
import json
import time
from typing import Any


def request_line(method: str, path: str, status: int, ms: float, context: str | None, headers: dict[str, str], body: bytes) -> str:
    """``21:40:03 POST /api/v1/dev/chat 200 12.3 ms ctx=dev cache=hit`` (the query string is left out: it may carry ids)."""
    parts = [time.strftime('%H:%M:%S'), method, path.split('?', 1)[0], str(status), f'{ms:.1f} ms']
    if context:
        parts.append(f'ctx={context}')
    cached = _cached(headers.get('content-type', ''), body) if status == 200 and path.split('?', 1)[0].endswith('/chat') else None
    if cached is not None:
        parts.append('cache=hit' if cached else 'cache=miss')
    return ' '.join(parts)


def _cached(content_type: str, body: bytes) -> bool | None:
    """The ``cached`` flag of a /chat reply, as JSON or as the final server-sent event."""
    try:
        if content_type.startswith('application/json'):
            payload: Any = json.loads(body)
        elif content_type.startswith('text/event-stream'):
            frames = [line for line in body.decode().splitlines() if line.startswith('data: ')]
            payload = json.loads(frames[-1][len('data: ') :]) if frames else None
        else:
            return None
    except (ValueError, UnicodeDecodeError):
        return None
    value = payload.get('cached') if isinstance(payload, dict) else None
    return value if isinstance(value, bool) else None


def bind_failure(exc: OSError, host: str, port: int) -> str:
    """The one-line reason the gateway could not listen, with what to do about it."""
    if exc.errno == errno.EADDRINUSE:
        return f'port {port} on {host} is already in use (another `make dev`?): stop that process or run with PORT=<free port>'
    if exc.errno == errno.EACCES:
        return f'not allowed to listen on {host}:{port}: use a port above 1023 (PORT=3000)'
    return f'cannot listen on {host}:{port}: {exc.strerror or exc}'


def locked_data_folder(data_dir: object) -> str:
    return (
        f'the data folder {data_dir} is in use by another process (another `make dev` or a test?): '
        'stop it, or point AGENT_MEMORY_DATA_DIR at another folder'
    )
