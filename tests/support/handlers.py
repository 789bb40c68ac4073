"""Calling the Lambda handlers the way API Gateway and Lambda would: each function folder imported as its own code
root, API Gateway v2 events, a Lambda context."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from local_runtime.events import LocalContext, http_event
from tests.support import conformance

ROOT = Path(__file__).resolve().parents[2]
MANAGEMENT_KEY = 'test-management-key'
_handlers: dict[str, ModuleType] = {}


def load_function(name: str) -> ModuleType:
    """Import ``functions/<name>/app.py`` the way Lambda would (each folder is its own code root)."""
    if name not in _handlers:
        spec = importlib.util.spec_from_file_location(f'function_{name}_app', ROOT / 'functions' / name / 'app.py')
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _handlers[name] = module
    return _handlers[name]


class Api:
    """Calls Lambda handlers with API Gateway v2 events for one context and its admin key."""

    def __init__(self, context_id: str, key: str) -> None:
        self.context_id = context_id
        self.key = key

    def call_raw(self, function: str, method: str, path: str, body: Any = None, *, key: str | None = None,
                 query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
        """The handler's raw result (status, headers, body text), e.g. for server-sent events."""
        all_headers = {'authorization': f'Bearer {key or self.key}', **(headers or {})}
        full_path = path if path.startswith('/api/') else f'/api/v1/{self.context_id}{path}'
        event = http_event(method, full_path, body=body, headers=all_headers, query=query)
        result: dict[str, Any] = load_function(function).lambda_handler(event, LocalContext())
        conformance.check(event, result)
        return result

    def call(self, function: str, method: str, path: str, body: Any = None, *, key: str | None = None,
             query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:  # fmt: skip
        result = self.call_raw(function, method, path, body, key=key, query=query, headers=headers)
        raw = result.get('body') or ''
        return result['statusCode'], (json.loads(raw) if raw else None), result.get('headers', {})


MGMT = Api('unused', MANAGEMENT_KEY)


def mgmt(method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[int, Any]:
    """A management-API call under ``/api/v1/contexts``: (status, body)."""
    code, payload, _ = MGMT.call('contexts', method, f'/api/v1/contexts{path}', body, **kwargs)
    return code, payload
