"""HNSW maintenance: the hourly sweep rebuilds a vector index once its table grew past both thresholds."""

from __future__ import annotations

import pytest

from agent_memory.composition import Services
from tests.support.handlers import Api
from tests.support.tuning import tune


def add_facts(api: Api, start: int, count: int) -> None:
    triples = [
        {'entity': {'type': 'project', 'name': f'p{i}'}, 'key': 'status', 'value': f'phase {i}'} for i in range(start, start + count)
    ]
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': triples})
    assert code == 200, body


def reindex(api: Api) -> int:
    code, body, _ = api.call('lifecycle', 'POST', '/lifecycle/reindex')
    assert code == 200, body
    return int(body['affected'])


def test_reindex_rebuilds_grown_indexes_once_and_search_still_answers(
    api: Api, services: Services, context_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given small thresholds (20 new rows, 50 % growth), When rows are added in steps and the reindex sweep runs after each, Then
    # only indexes past both thresholds are rebuilt, once, and search still answers
    tune(monkeypatch, reindex_min_new_rows=20, reindex_min_growth=0.5)
    store = services.lifecycle(context_id)
    add_facts(api, 0, 10)
    assert reindex(api) == 0  # 10 new rows: below the minimum
    add_facts(api, 10, 20)
    assert reindex(api) == 2  # attribute and entity grew by 30 ≥ 20 each; chunks and traces did not
    assert store.vector_index_growth()['attribute'] == (30, 30)
    assert reindex(api) == 0  # idempotent: nothing grew since
    add_facts(api, 30, 10)
    assert reindex(api) == 0  # 10 more: under both the minimum and 50 % of 30
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'p7 status', 'mode': 'vector', 'k': 3})
    assert code == 200 and body['hits'][0]['text'] in ('p7 status: phase 7', 'p7 (project)')


def test_a_large_backlog_triggers_a_rebuild_below_the_growth_ratio(
    api: Api, services: Services, context_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a backlog cap of 8, When rows grow under the ratio but past the cap, Then the indexes are rebuilt
    tune(monkeypatch, reindex_min_new_rows=5, reindex_min_growth=0.5, reindex_max_backlog=8)
    add_facts(api, 0, 30)
    assert reindex(api) == 2
    add_facts(api, 30, 6)
    assert reindex(api) == 0  # 6 new: ≥ the minimum, but < 50 % of 30 and < the backlog cap of 8
    add_facts(api, 36, 4)
    assert reindex(api) == 2  # 10 new: still < 50 %, but ≥ the backlog cap
    assert services.lifecycle(context_id).vector_index_growth()['attribute'] == (40, 40)
