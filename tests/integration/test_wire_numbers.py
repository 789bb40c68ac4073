"""Numbers on the wire are rounded to what they mean (issue 29): importance and scores to 4 decimals, milliseconds to 1,
on REST, SSE and MCP alike; the stored values keep their precision."""

from __future__ import annotations

import json
import re
from typing import Any

from agent_memory.composition import Services
from tests.support.handlers import Api


def decimals(value: float) -> int:
    text = repr(value)
    return len(text.split('.', 1)[1]) if '.' in text and 'e' not in text else 0


def floats_under(body: Any, keys: set[str]) -> list[float]:
    found: list[float] = []
    if isinstance(body, dict):
        for key, value in body.items():
            if key in keys and isinstance(value, float):
                found.append(value)
            elif key in keys and isinstance(value, list):
                found += [v for v in value if isinstance(v, float)]
            else:
                found += floats_under(value, keys)
    elif isinstance(body, list):
        for value in body:
            found += floats_under(value, keys)
    return found


def test_importance_scores_and_durations_are_rounded_on_every_surface(api: Api, services: Services) -> None:
    triple = {'entity': {'type': 'person', 'name': 'Dana'}, 'key': 'city', 'value': 'Oslo', 'memory_category': 'identity'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    for _ in range(3):  # each recall reinforces: 1.0 × 1.1³ is 1.3310000000000004 in floating point
        code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Which city does Dana live in?'})
        assert code == 200
    stored = services.db.query(services.store(api.context_id).database, 'SELECT VALUE importance FROM attribute;')[0][0]
    assert stored != round(stored, 4)  # the stored value keeps its precision
    code, entity, _ = api.call('entities', 'GET', '/entities/person/dana')
    assert code == 200 and entity['attributes'][0]['importance'] == 1.331
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Which city does Dana live in?'})
    assert all(decimals(v) <= 4 for v in floats_under(body, {'score', 'topScores'}))
    assert all(decimals(v) <= 1 for v in floats_under(body, {'queryMs', 'latencyMs'}))
    assert floats_under(body, {'score'}) and floats_under(body, {'queryMs'})
    raw = api.call_raw('chat', 'POST', '/chat', {'message': 'Which city does Dana live in?', 'stream': True})
    frames = [json.loads(f) for f in re.findall(r'^data: (.*)$', raw['body'], re.M)]
    assert all(decimals(v) <= 4 for v in floats_under(frames[-1], {'score'})) and floats_under(frames[-1], {'score'})
