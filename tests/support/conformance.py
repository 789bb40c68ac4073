"""Every response a test receives through ``Api`` must be one the OpenAPI document describes: a status the
operation lists, and a JSON body valid against that status's schema. The document is generated from the route
operations and response models, so this keeps the models (and the statuses each operation declares) true to the
handlers across the whole suite, not only for the requests the fuzzer happens to generate."""

from __future__ import annotations

import json
import re
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from openapi.generate import OUTPUT

UNDOCUMENTED = 500  # an unexpected failure: never promised, always redacted (tests assert on it deliberately)


@cache
def _document() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(OUTPUT.read_text(encoding='utf-8'))
    return loaded


@cache
def _patterns() -> list[tuple[str, re.Pattern[str], str]]:
    """(method, path regex, documented path), literal segments before parameters (``/traces/stats`` before ``{id}``)."""
    found = [
        (method.upper(), re.compile(re.sub(r'\\\{(\w+)\\\}', r'[^/]+', re.escape(path)) + '$'), path)
        for path, operations in _document()['paths'].items()
        for method in operations
    ]
    return sorted(found, key=lambda f: f[2].count('{'))


@cache
def _validator(method: str, path: str, status: str, media: str) -> Draft202012Validator:
    content = _document()['paths'][path][method.lower()]['responses'][status].get('content') or {}
    if media not in content:
        raise AssertionError(f'{method} {path} → {status}: {media} is not a documented media type ({sorted(content)})')
    return Draft202012Validator({**content[media]['schema'], 'components': _document()['components']})


def check(event: dict[str, Any], result: dict[str, Any]) -> None:
    """Fail unless ``result`` (a handler's answer to ``event``) is documented for the route ``event`` reached."""
    method, raw_path = event['requestContext']['http']['method'], event['rawPath']
    documented = next((path for m, pattern, path in _patterns() if m == method and pattern.fullmatch(raw_path)), None)
    status = result['statusCode']
    if documented is None or status == UNDOCUMENTED:
        return  # an undeclared route (its 404 is tested elsewhere) or a deliberate unexpected failure
    responses = _document()['paths'][documented][method.lower()]['responses']
    assert str(status) in responses, f'{method} {documented} answered {status}, which the document does not list: {result.get("body")}'
    media = (result.get('headers') or {}).get('Content-Type', '').split(';')[0]
    body = result.get('body') or ''
    if not body:
        assert 'content' not in responses[str(status)], f'{method} {documented} → {status}: no body, but the document promises one'
        return
    validator = _validator(method, documented, str(status), media)
    if media in ('application/json', 'application/problem+json'):
        errors = sorted(validator.iter_errors(json.loads(body)), key=lambda e: list(e.absolute_path))
        assert not errors, f'{method} {documented} → {status}: body does not match the document: ' + '; '.join(
            f'{"/".join(map(str, e.absolute_path))}: {e.message[:300]}' for e in errors[:5]
        )
