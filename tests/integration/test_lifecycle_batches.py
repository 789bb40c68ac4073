"""Sweeps change every due row exactly once, whatever the batch size: decay is one step of the context's decay clock
(importance is computed on read), expiry walks the ``expiry_from`` index ``batch`` rows at a time until nothing is due."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.composition import IMPORTANCE
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api


@pytest.mark.parametrize('batch', [1, 3, 7, 50])
def test_decay_and_expiry_touch_each_row_once_across_batches(api: Api, store: MemoryStore, services: Any, batch: int) -> None:
    # Given 10 context, 5 knowledge and 3 identity facts, the context ones 8 days old
    old = (dt.datetime.now(dt.UTC) - dt.timedelta(days=8)).isoformat()
    for category, count, observed in (('context', 10, old), ('knowledge', 5, None), ('identity', 3, None)):
        triples = [{'entity': {'type': 'person', 'name': 'Alice'}, 'key': f'{category}{i}', 'value': 'v'} for i in range(count)]
        body = {'infer': 'triples', 'memory_category': category, 'triples': triples, **({'observed_at': observed} if observed else {})}
        assert api.call('facts', 'POST', '/facts', body)[0] == 200
    sweeps = LifecycleStore(services.db, store.database, IMPORTANCE, batch=batch)
    # When decay and expiry run with this batch size
    decayed = sweeps.decay('day-1')
    expired = sweeps.expire(dt.datetime.now(dt.UTC), dt.datetime.now(dt.UTC) - dt.timedelta(days=7))
    # Then every row got exactly one step and every old context fact expired once
    importance = {row['key']: row['importance'] for row in store.rows('SELECT key, importance FROM attribute;')}
    assert decayed == 10 + 5 + 1  # the entity Alice (knowledge) decays too
    assert all(importance[f'context{i}'] == pytest.approx(0.475) for i in range(10))
    assert all(importance[f'knowledge{i}'] == pytest.approx(0.796) for i in range(5))
    assert all(importance[f'identity{i}'] == 1.0 for i in range(3))
    assert expired == 10
    assert sweeps.decay('day-1') == 0 and sweeps.expire(dt.datetime.now(dt.UTC), dt.datetime.now(dt.UTC) - dt.timedelta(days=7)) == 0
