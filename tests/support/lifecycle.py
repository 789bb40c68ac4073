"""Writing facts with a category and a known time, reading their importance, running sweeps through the API."""

from __future__ import annotations

import datetime as dt
from typing import Any

from tests.support.handlers import Api

ALICE = {'type': 'person', 'name': 'alice'}


def ago(days: float) -> dt.datetime:
    return dt.datetime.now(dt.UTC) - dt.timedelta(days=days)


def rfc3339(moment: dt.datetime) -> str:
    return moment.isoformat().replace('+00:00', 'Z')


def remember(api: Api, key: str, value: str, category: str, observed_at: dt.datetime | None = None,
             entity: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """One triple in ``category``, known at ``observed_at`` (default now); returns the write's answer."""
    body: dict[str, Any] = {'infer': 'triples', 'memory_category': category,
                            'triples': [{'entity': entity or ALICE, 'key': key, 'value': value}]}  # fmt: skip
    if observed_at is not None:
        body['observed_at'] = rfc3339(observed_at)
    status, result, _ = api.call('facts', 'POST', '/facts', body)
    assert status == 200, result
    return result


def attribute_id(result: dict[str, Any]) -> str:
    """The bare key of the single attribute a triples write created."""
    (attribute,) = result['extraction']['attributes']
    return str(attribute['id']).split(':', 1)[1]


def current_attributes(api: Api, entity_type: str = 'person', name: str = 'alice') -> dict[str, dict[str, Any]]:
    status, body, _ = api.call('entities', 'GET', f'/entities/{entity_type}/{name}')
    assert status == 200, body
    return {a['key']: a for a in body['attributes']}


def importance(api: Api, key: str) -> float:
    return float(current_attributes(api)[key]['importance'])


def sweep(api: Api, name: str) -> int:
    """Run one sweep through POST /lifecycle/{name}; the rows it affected."""
    status, body, _ = api.call('lifecycle', 'POST', f'/lifecycle/{name}')
    assert status == 200, body
    return int(body['affected'])


def trace_row(table: str, created_at: dt.datetime) -> dict[str, Any]:
    """A minimal valid row of a trace table, made at ``created_at``."""
    common = {'latency_ms': 1.0, 'created_at': created_at}
    if table == 'decision_trace':
        return {**common, 'input': {'infer': 'triples'}, 'outcomes': [], 'principal': 'admin'}
    if table == 'retrieval_trace':
        return {**common, 'query': 'q', 'mode': 'hybrid', 'tier_entered': 3, 'tier_reason': 'test', 'visibility_fingerprint': 'fp'}
    return {**common, 'message': 'm', 'reply': 'r', 'visibility_fingerprint': 'fp'}
