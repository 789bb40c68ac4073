"""Sweeps that cost what changes (issue 14): decay writes no fact row, expiry and trace purge read only due rows."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.composition import IMPORTANCE, Services
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.db.memory_store import FACT_TABLES, MemoryStore
from agent_memory.domain import lifecycle
from agent_memory.domain.context_config import effective_config
from tests.support.handlers import Api
from tests.support.lifecycle import ago, attribute_id, current_attributes, importance, remember, sweep, trace_row


def count_fact_writes(store: MemoryStore) -> None:
    """Record every UPDATE of a fact row in ``fact_write`` (a test-only table event)."""
    store.q('DEFINE TABLE fact_write SCHEMALESS;')
    for table in FACT_TABLES:
        store.q(f'DEFINE EVENT count_writes ON {table} WHEN $event = "UPDATE" THEN (CREATE fact_write SET row = $after.id);')


def fact_writes(store: MemoryStore) -> int:
    return int(store.q('RETURN count((SELECT VALUE id FROM fact_write));')[0])


def test_decay_writes_no_fact_row_yet_every_read_shows_the_decayed_value(api: Api, store: MemoryStore) -> None:
    # Given context and knowledge facts, and a watch on writes to fact rows
    remember(api, 'mood', 'busy', 'context')
    remember(api, 'employer', 'Acme', 'knowledge')
    count_fact_writes(store)
    # When the decay sweep runs three times
    for _ in range(3):
        assert sweep(api, 'decay') >= 2
    # Then no fact row was written
    assert fact_writes(store) == 0
    # And the entity route, the state view and a raw SELECT all show base × factor³
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95**3, abs=5e-5)
    status, state, _ = api.call('views', 'GET', '/state')
    assert status == 200
    assert state['context']['attributes'][0]['importance'] == pytest.approx(0.5 * 0.95**3, abs=5e-5)
    assert store.q("SELECT VALUE importance FROM attribute WHERE key = 'employer';")[0] == [pytest.approx(0.8 * 0.995**3, abs=5e-5)]


def test_reinforcement_multiplies_the_decayed_value_and_decay_continues_from_it(api: Api, services: Services, context_id: str) -> None:
    # Given a context fact at 0.5, decayed once (0.475)
    mood_id = attribute_id(remember(api, 'mood', 'busy', 'context'))
    store = services.lifecycle(context_id)
    sweep(api, 'decay')
    # When it is reinforced, Then it is 1.1 × the current value, not of its initial one
    assert store.reinforce([('attribute', mood_id)]) == 1
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95 * 1.1, abs=5e-5)
    # When two more days pass, Then decay applies to the reinforced value
    sweep(api, 'decay')
    sweep(api, 'decay')
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95 * 1.1 * 0.95**2, abs=5e-5)


def test_a_fact_written_after_decay_steps_starts_at_its_initial_importance(api: Api) -> None:
    # Given a context that has decayed ten times
    remember(api, 'old', 'x', 'context')
    for _ in range(10):
        sweep(api, 'decay')
    # When a new context fact is written
    remember(api, 'new', 'y', 'context')
    # Then it starts at 0.5, and one more step lowers both by one day
    assert importance(api, 'new') == pytest.approx(0.5, abs=5e-5)
    sweep(api, 'decay')
    assert importance(api, 'new') == pytest.approx(0.475, abs=5e-5)
    assert importance(api, 'old') == pytest.approx(0.5 * 0.95**11, abs=5e-5)


def test_a_manual_decay_does_not_reopen_the_scheduled_day(api: Api, services: Services, context_id: str) -> None:
    # Given a context fact and today's scheduled decay already applied
    remember(api, 'mood', 'busy', 'context')
    store, config, today = services.lifecycle(context_id), effective_config(None), dt.datetime.now(dt.UTC)
    assert lifecycle.scheduled_decay(store, config, today) >= 1
    # When an operator runs a manual step and EventBridge then redelivers today's schedule
    assert sweep(api, 'decay') >= 1
    redelivered = lifecycle.scheduled_decay(store, config, today)
    # Then the redelivery changes nothing: two steps in all
    assert redelivered == 0
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95**2, abs=5e-5)


def test_expiry_closes_a_backdated_fact_written_after_a_sweep_and_skips_closed_ones(api: Api, store: MemoryStore) -> None:
    # Given an old context fact expired by a sweep
    remember(api, 'first', 'a', 'context', ago(10))
    assert sweep(api, 'expire') == 1
    # When a fact observed 9 days ago arrives later, and another old one is closed by a write of its own
    remember(api, 'late', 'b', 'context', ago(9))
    remember(api, 'closed', 'c', 'context', ago(8))
    store.q("UPDATE attribute SET valid_until = time::now() - 1h WHERE key = 'closed';")
    remember(api, 'fresh', 'd', 'context')
    # Then the closed row has left the expiry index, and the next sweep expires only the late one
    assert store.q('SELECT VALUE key FROM attribute WHERE expiry_from IS NOT NONE ORDER BY key;')[0] == ['fresh', 'late']
    assert sweep(api, 'expire') == 1
    assert set(current_attributes(api)) == {'fresh'}
    # And the closed row kept its own valid_until
    closed_until = store.q("SELECT VALUE valid_until FROM attribute WHERE key = 'closed';")[0][0]
    assert closed_until < dt.datetime.now(dt.UTC) - dt.timedelta(minutes=30)
    assert store.q('SELECT VALUE key FROM attribute WHERE expiry_from IS NOT NONE;')[0] == ['fresh']


@pytest.mark.parametrize('batch', [1, 2, 5])
def test_trace_purge_deletes_every_due_trace_across_batches_and_equal_times(services: Services, store: MemoryStore, batch: int) -> None:
    # Given seven retrieval traces 100 days old, four of them at the very same instant, and two recent ones
    same = ago(100)
    rows: list[dict[str, Any]] = [trace_row('retrieval_trace', same) for _ in range(4)]
    rows += [trace_row('retrieval_trace', ago(100 + i)) for i in range(1, 4)]
    rows += [trace_row('retrieval_trace', ago(i)) for i in (1, 2)]
    for row in rows:
        store.q('CREATE retrieval_trace CONTENT $row;', row=row)
    sweeps = LifecycleStore(services.db, store.database, IMPORTANCE, batch=batch)
    # When traces older than 90 days are purged in batches of this size
    purged = sweeps.purge_traces({'retrieval_trace': dt.datetime.now(dt.UTC) - dt.timedelta(days=90)})
    # Then exactly the seven old ones are gone, and a second run finds nothing
    assert purged == 7
    assert len(store.q('SELECT VALUE id FROM retrieval_trace;')[0]) == 2
    assert sweeps.purge_traces({'retrieval_trace': dt.datetime.now(dt.UTC) - dt.timedelta(days=90)}) == 0
