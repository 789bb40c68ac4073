"""A small HTTP client for the Agent Memory API (stdlib only, so the CLI installs with nothing extra)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

KEY_HINT = 'a key (--key or AGENT_MEMORY_KEY)'
MANAGEMENT_KEY_HINT = 'a management key (--management-key or AGENT_MEMORY_MANAGEMENT_KEY)'
RETRIES = 5  # 429 and 503 answers are retried after their Retry-After (capped), this many times
MAX_RETRY_WAIT = 30.0


class ApiError(Exception):
    """The API answered with an error status (a problem+json body when it is ours)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f'HTTP {status}: {detail}')
        self.status = status
        self.detail = detail


class Unreachable(Exception):
    """No answer from the API (wrong URL, gateway not running, network)."""


@dataclass(frozen=True)
class Answer:
    """A successful answer: its body (raw bytes) and headers (names lower-cased)."""

    body: bytes
    headers: dict[str, str]

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class Client:
    url: str
    key: str | None = None
    management_key: str | None = None
    timeout: float = 60.0
    sleep: Any = field(default=time.sleep, repr=False)  # tests make retries instant

    def call(self, method: str, path: str, body: Any = None, *, management: bool = False, query: dict[str, str] | None = None,
             key: str | None = None, headers: dict[str, str] | None = None) -> Any:  # fmt: skip
        """The JSON body of a successful answer (None for an empty one); ApiError for an error status. ``body`` is sent as
        JSON, or as it is when it is already encoded (bytes)."""
        return self.send(method, path, body, management=management, query=query, key=key, headers=headers).json()

    def send(self, method: str, path: str, body: Any = None, *, management: bool = False, query: dict[str, str] | None = None,
             key: str | None = None, headers: dict[str, str] | None = None) -> Answer:  # fmt: skip
        token = key or (self.management_key if management else self.key)
        if not token:
            raise ApiError(401, f'this command needs {MANAGEMENT_KEY_HINT if management else KEY_HINT}')
        target = self.url.rstrip('/') + urllib.parse.quote(path) + (f'?{urllib.parse.urlencode(query)}' if query else '')
        data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode() if body is not None else None
        for attempt in range(RETRIES + 1):
            request = urllib.request.Request(target, data=data, method=method)
            request.add_header('Authorization', f'Bearer {token}')
            request.add_header('Accept', 'application/json')
            for name, value in (headers or {}).items():
                request.add_header(name, value)
            if data is not None:
                request.add_header('Content-Type', 'application/json')
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # the operator's own URL
                    return Answer(response.read(), {k.lower(): v for k, v in response.headers.items()})
            except urllib.error.HTTPError as error:
                raw = error.read()
                retry_after = _retry_after(error.headers.get('Retry-After'))
                if error.code in (429, 503) and retry_after is not None and attempt < RETRIES:
                    self.sleep(retry_after)
                    continue
                raise ApiError(error.code, _detail(raw, str(error.reason))) from None
            except (urllib.error.URLError, OSError) as error:
                raise Unreachable(f'cannot reach {_without_credentials(self.url)}: {getattr(error, "reason", error)}') from None
        raise AssertionError('unreachable')


def _retry_after(value: str | None) -> float | None:
    try:
        return min(max(float(value), 0.0), MAX_RETRY_WAIT) if value is not None else None
    except ValueError:
        return None


def _detail(raw: bytes, reason: str) -> str:
    try:
        problem = json.loads(raw)
        return str(problem.get('detail') or problem.get('message') or raw.decode())
    except (ValueError, AttributeError):
        return raw.decode(errors='replace')[:500] or reason


def _without_credentials(url: str) -> str:
    """The URL as it may be shown: a ``user:password@`` part is left out."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = (parts.hostname or '') + (f':{parts.port}' if parts.port else '')
    return urllib.parse.urlunsplit(parts._replace(netloc=host))
