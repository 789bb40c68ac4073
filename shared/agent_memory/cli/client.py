"""A small HTTP client for the Agent Memory API (stdlib only, so the CLI installs with nothing extra)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

KEY_HINT = 'a key (--key or AGENT_MEMORY_KEY)'
MANAGEMENT_KEY_HINT = 'a management key (--management-key or AGENT_MEMORY_MANAGEMENT_KEY)'


class ApiError(Exception):
    """The API answered with an error status (a problem+json body when it is ours)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f'HTTP {status}: {detail}')
        self.status = status
        self.detail = detail


class Unreachable(Exception):
    """No answer from the API (wrong URL, gateway not running, network)."""


@dataclass(frozen=True)
class Client:
    url: str
    key: str | None = None
    management_key: str | None = None
    timeout: float = 60.0

    def call(self, method: str, path: str, body: Any = None, *, management: bool = False,
             query: dict[str, str] | None = None, key: str | None = None) -> Any:  # fmt: skip
        token = key or (self.management_key if management else self.key)
        if not token:
            which = (
                'a management key (--management-key or AGENT_MEMORY_MANAGEMENT_KEY)' if management else 'a key (--key or AGENT_MEMORY_KEY)'
            )
            raise ApiError(401, f'this command needs {which}')
        target = self.url.rstrip('/') + path + (f'?{urllib.parse.urlencode(query)}' if query else '')
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(target, data=data, method=method)
        request.add_header('Authorization', f'Bearer {token}')
        request.add_header('Accept', 'application/json')
        if data is not None:
            request.add_header('Content-Type', 'application/json')
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # the operator's own URL
                raw = response.read()
        except urllib.error.HTTPError as error:
            raw = error.read()
            try:
                problem = json.loads(raw)
                detail = problem.get('detail') or problem.get('message') or raw.decode()
            except (ValueError, AttributeError):
                detail = raw.decode(errors='replace')[:500] or error.reason
            raise ApiError(error.code, str(detail)) from None
        except (urllib.error.URLError, OSError) as error:
            raise Unreachable(f'cannot reach {self.url}: {getattr(error, "reason", error)}') from None
        return json.loads(raw) if raw else None
