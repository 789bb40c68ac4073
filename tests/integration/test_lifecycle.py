"""Lifecycle exactness (CONTRACT §5, §9): initial importance, decay, reinforcement, expiry, trace retention, sweeps."""

from __future__ import annotations

import datetime as dt
import threading
import uuid
from collections.abc import Iterator

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import FACT_TABLES, MemoryStore
from agent_memory.domain import lifecycle
from agent_memory.domain.context_config import effective_config
from agent_memory.domain.contexts import create_context, mint_context_key
from local_runtime.events import LocalContext, schedule_event
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api, load_function
from tests.support.lifecycle import ALICE, ago, attribute_id, current_attributes, importance, remember, sweep, trace_row


def non_identity_fact_rows(store: MemoryStore) -> int:
    return sum(int(store.q(f"RETURN count((SELECT VALUE id FROM {t} WHERE memory_category != 'identity'));")[0]) for t in FACT_TABLES)


@pytest.fixture
def second_context(services: Services) -> Iterator[tuple[str, Api]]:
    """Another context with its own admin key, removed afterwards."""
    cid = f't{uuid.uuid4().hex[:12]}'
    create_context(services.control, services.store, cid, {})
    try:
        yield cid, Api(cid, mint_context_key(services.control, cid, 'admin', 'test'))
    finally:
        services.control.delete_context(cid)
        services.drop_context(cid)


# ---- initial importance and decay -----------------------------------------------------------


def test_initial_importance_follows_the_category(api: Api) -> None:
    # Given one fact written in each memory category
    remember(api, 'name', 'Alice', 'identity')
    remember(api, 'employer', 'Acme', 'knowledge')
    remember(api, 'mood', 'busy', 'context')
    # When the entity is read
    attributes = current_attributes(api)
    # Then identity starts at 1.0, knowledge at 0.8, context at 0.5
    assert attributes['name']['importance'] == pytest.approx(1.0, abs=5e-5)
    assert attributes['employer']['importance'] == pytest.approx(0.8, abs=5e-5)
    assert attributes['mood']['importance'] == pytest.approx(0.5, abs=5e-5)
    assert {k: a['memoryCategory'] for k, a in attributes.items()} == {'name': 'identity', 'employer': 'knowledge', 'mood': 'context'}


def test_triples_default_to_knowledge(api: Api) -> None:
    # Given a triple written without any memory_category
    # When it is read back
    status, body, _ = api.call(
        'facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': ALICE, 'key': 'team', 'value': 'core'}]}
    )
    assert status == 200, body
    # Then it is knowledge at 0.8 (§6.1: structured ingestion is deliberate knowledge)
    team = current_attributes(api)['team']
    assert team['memoryCategory'] == 'knowledge'
    assert team['importance'] == pytest.approx(0.8, abs=5e-5)


def test_one_decay_run_applies_exactly_one_day_per_category(api: Api, store: MemoryStore) -> None:
    # Given an identity, a knowledge and a context fact, and a context relation
    remember(api, 'name', 'Alice', 'identity')
    remember(api, 'employer', 'Acme', 'knowledge')
    remember(api, 'mood', 'busy', 'context')
    status, body, _ = api.call('facts', 'POST', '/facts', {
        'infer': 'triples', 'memory_category': 'context',
        'triples': [{'entity': ALICE, 'key': 'talking_to', 'target': {'type': 'person', 'name': 'bob'}}],
    })  # fmt: skip
    assert status == 200, body
    expected_affected = non_identity_fact_rows(store)
    counts_before = store.table_counts()
    # When one decay run happens
    affected = sweep(api, 'decay')
    # Then context × 0.95, knowledge × 0.995, identity unchanged
    attributes = current_attributes(api)
    assert attributes['mood']['importance'] == pytest.approx(0.475, abs=5e-5)
    assert attributes['employer']['importance'] == pytest.approx(0.796, abs=5e-5)
    assert attributes['name']['importance'] == pytest.approx(1.0, abs=5e-5)
    # And relations and entities decay too (bob is a context entity, alice an identity one)
    (relation,) = [r for r in api.call('entities', 'GET', '/entities/person/alice')[1]['relations'] if r['label'] == 'talking_to']
    assert relation['importance'] == pytest.approx(0.475, abs=5e-5)
    assert api.call('entities', 'GET', '/entities/person/bob')[1]['entity']['importance'] == pytest.approx(0.475, abs=5e-5)
    assert api.call('entities', 'GET', '/entities/person/alice')[1]['entity']['importance'] == pytest.approx(1.0, abs=5e-5)
    # And the sweep reports every non-identity row it stepped, and deletes nothing
    assert affected == expected_affected
    assert store.table_counts() == counts_before


def test_thirty_decay_runs_compound(api: Api) -> None:
    # Given a context fact at 0.5 and a knowledge fact at 0.8
    remember(api, 'mood', 'busy', 'context')
    remember(api, 'employer', 'Acme', 'knowledge')
    # When the decay sweep runs 30 times (thirty days fast-forwarded)
    for _ in range(30):
        sweep(api, 'decay')
    # Then each decayed by its daily factor to the 30th power
    attributes = current_attributes(api)
    assert attributes['mood']['importance'] == pytest.approx(0.5 * 0.95**30, abs=5e-5)
    assert attributes['mood']['importance'] == pytest.approx(0.1073, abs=1e-4)
    assert attributes['employer']['importance'] == pytest.approx(0.8 * 0.995**30, abs=5e-5)


def test_scheduled_decay_applies_once_per_day_token(api: Api, services: Services, context_id: str) -> None:
    # Given a context fact at 0.5
    remember(api, 'mood', 'busy', 'context')
    store = services.lifecycle(context_id)
    config = effective_config(None)
    today = dt.datetime.now(dt.UTC)
    # When the scheduled decay is delivered twice for the same day (EventBridge redelivery)
    first = lifecycle.scheduled_decay(store, config, today)
    second = lifecycle.scheduled_decay(store, config, today)
    # Then only the first applies
    assert first >= 1
    assert second == 0
    assert importance(api, 'mood') == pytest.approx(0.475, abs=5e-5)
    # And the raw day-token form behaves the same
    assert store.decay(today.date().isoformat()) == 0
    # And the next day steps again, as does any manual run (manual runs always step)
    assert lifecycle.scheduled_decay(store, config, today + dt.timedelta(days=1)) >= 1
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95**2, abs=5e-5)
    assert sweep(api, 'decay') >= 1
    assert importance(api, 'mood') == pytest.approx(0.5 * 0.95**3, abs=5e-5)


# ---- reinforcement --------------------------------------------------------------------------


def test_reinforcement_multiplies_by_1_1_and_caps_at_2(api: Api, services: Services, context_id: str) -> None:
    # Given an identity fact at 1.0
    name_id = attribute_id(remember(api, 'name', 'Alice', 'identity'))
    store = services.lifecycle(context_id)
    # When reinforced seven times
    for _ in range(7):
        assert store.reinforce([('attribute', name_id)]) == 1
    # Then it is 1.1**7 (still under the cap)
    assert importance(api, 'name') == pytest.approx(1.1**7, abs=5e-5)
    # When reinforced once more (1.1**8 = 2.14 > 2) and then many more times
    store.reinforce([('attribute', name_id)])
    assert importance(api, 'name') == pytest.approx(2.0, abs=5e-5)
    for _ in range(10):
        store.reinforce([('attribute', name_id)])
    # Then it stays exactly at the 2.0 cap
    assert importance(api, 'name') == pytest.approx(2.0, abs=5e-5)
    assert importance(api, 'name') <= 2.0


def test_reinforcement_is_one_write_for_many_rows_and_ignores_non_fact_tables(api: Api, services: Services, context_id: str) -> None:
    # Given two facts
    mood_id = attribute_id(remember(api, 'mood', 'busy', 'context'))
    employer_id = attribute_id(remember(api, 'employer', 'Acme', 'knowledge'))
    store = services.lifecycle(context_id)
    # When both (plus a non-fact ref) are reinforced in one call
    touched = store.reinforce([('attribute', mood_id), ('attribute', employer_id), ('turn', 'whatever')])
    # Then exactly the two facts were touched, each by one step
    assert touched == 2
    assert importance(api, 'mood') == pytest.approx(0.55, abs=5e-5)
    assert importance(api, 'employer') == pytest.approx(0.88, abs=5e-5)
    # And an empty or all-foreign ref list does nothing
    assert store.reinforce([]) == 0
    assert store.reinforce([('session', 'x')]) == 0


def test_inspection_reads_do_not_reinforce(api: Api) -> None:
    # Given a context fact at 0.5
    remember(api, 'mood', 'busy', 'context')
    # When it is inspected several ways, several times
    reads = [('entities', '/entities/person/alice'), ('entities', '/entities/person/alice/history/mood'),
             ('views', '/state'), ('views', '/profile')]  # fmt: skip
    statuses = [api.call(function, 'GET', path)[0] for _ in range(3) for function, path in reads]
    # Then every read succeeded and its importance has not moved
    assert statuses == [200] * 12
    assert importance(api, 'mood') == pytest.approx(0.5, abs=5e-5)


def test_concurrent_reinforcement_loses_no_update(api: Api, services: Services, context_id: str) -> None:
    # Given a context fact at 0.5 and a knowledge fact at 0.8
    mood_id = attribute_id(remember(api, 'mood', 'busy', 'context'))
    employer_id = attribute_id(remember(api, 'employer', 'Acme', 'knowledge'))
    refs = [('attribute', mood_id), ('attribute', employer_id)]
    threads_n, calls_each = 4, 2
    barrier = threading.Barrier(threads_n)
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            store = services.lifecycle(context_id)
            barrier.wait()
            for _ in range(calls_each):
                store.reinforce(refs)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    # When 4 threads each reinforce both facts twice, at the same time
    threads = [threading.Thread(target=worker) for _ in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # Then all 8 steps landed on both rows (0.5·1.1⁸ ≈ 1.0718, 0.8·1.1⁸ ≈ 1.7149; neither hits the cap)
    assert not errors, errors
    total = threads_n * calls_each
    assert importance(api, 'mood') == pytest.approx(0.5 * 1.1**total, abs=5e-5)
    assert importance(api, 'employer') == pytest.approx(0.8 * 1.1**total, abs=5e-5)


# ---- expiry ---------------------------------------------------------------------------------


def test_expiry_closes_only_old_context_facts_and_keeps_their_history(api: Api, store: MemoryStore) -> None:
    # Given facts observed 8 days ago in every category, and a context fact observed 1 day ago
    eight_days = ago(8)
    remember(api, 'mood', 'busy', 'context', eight_days)
    remember(api, 'employer', 'Acme', 'knowledge', eight_days)
    remember(api, 'name', 'Alice', 'identity', eight_days)
    remember(api, 'today', 'writing tests', 'context', ago(1))
    assert set(current_attributes(api)) == {'mood', 'employer', 'name', 'today'}
    counts_before = store.table_counts()
    # When the expiry sweep runs
    affected = sweep(api, 'expire')
    # Then exactly the old context fact expired
    assert affected == 1
    attributes = current_attributes(api)
    assert set(attributes) == {'employer', 'name', 'today'}
    # And it has left the current state too
    status, state, _ = api.call('views', 'GET', '/state')
    assert status == 200
    assert [a['key'] for a in state['context']['attributes']] == ['today']
    assert [a['key'] for a in state['knowledge']['attributes']] == ['employer']
    assert [a['key'] for a in state['identity']['attributes']] == ['name']
    # And history still has it, closed (valid_until set), never deleted
    status, history, _ = api.call('entities', 'GET', '/entities/person/alice/history/mood')
    assert status == 200
    (row,) = history['history']
    assert row['value'] == 'busy'
    assert row['validUntil'] is not None
    assert dt.datetime.fromisoformat(row['validUntil'].replace('Z', '+00:00')) <= dt.datetime.now(dt.UTC)
    assert row['supersededBy'] is None
    assert store.table_counts() == counts_before
    # When the sweep runs again, Then nothing is left to do (idempotent)
    assert sweep(api, 'expire') == 0
    assert set(current_attributes(api)) == {'employer', 'name', 'today'}


def test_expiry_is_measured_from_the_known_time_and_respects_the_ttl_boundary(api: Api) -> None:
    # Given context facts observed just inside and just outside the 7-day TTL
    remember(api, 'inside', 'x', 'context', ago(6.9))
    remember(api, 'outside', 'y', 'context', ago(7.1))
    # When expiry runs
    assert sweep(api, 'expire') == 1
    # Then only the one past the TTL ended
    assert set(current_attributes(api)) == {'inside'}


# ---- trace retention ------------------------------------------------------------------------


def _seed_traces(store: MemoryStore) -> None:
    for table in ('decision_trace', 'retrieval_trace', 'response_trace'):
        for days in (100, 50, 1):
            store.q(f'CREATE {table} CONTENT $row;', row=trace_row(table, ago(days)))


def _trace_ages(store: MemoryStore, table: str) -> list[int]:
    now = dt.datetime.now(dt.UTC)
    return sorted(round((now - c).total_seconds() / 86400) for c in store.q(f'SELECT VALUE created_at FROM {table};')[0])


def test_trace_purge_with_default_retention(api: Api, store: MemoryStore) -> None:
    # Given decision, retrieval and response traces 100, 50 and 1 days old
    _seed_traces(store)
    # When the purge runs with the default windows (decision unbounded, retrieval/response 90 days)
    affected = sweep(api, 'purge-traces')
    # Then only the 100-day retrieval and response traces are gone
    assert affected == 2
    assert _trace_ages(store, 'decision_trace') == [1, 50, 100]
    assert _trace_ages(store, 'retrieval_trace') == [1, 50]
    assert _trace_ages(store, 'response_trace') == [1, 50]
    # And a second run finds nothing
    assert sweep(api, 'purge-traces') == 0


def test_trace_purge_with_a_decision_window(services: Services) -> None:
    # Given a context whose config bounds decision traces to 30 days
    cid = f't{uuid.uuid4().hex[:12]}'
    create_context(services.control, services.store, cid, {'trace_retention': {'decision_trace_days': 30}})
    try:
        api = Api(cid, mint_context_key(services.control, cid, 'admin', 'test'))
        store = services.store(cid)
        _seed_traces(store)
        # When the purge runs
        affected = sweep(api, 'purge-traces')
        # Then decision traces older than 30 days go too, alongside the 100-day retrieval/response ones
        assert affected == 4
        assert _trace_ages(store, 'decision_trace') == [1]
        assert _trace_ages(store, 'retrieval_trace') == [1, 50]
        assert _trace_ages(store, 'response_trace') == [1, 50]
    finally:
        services.control.delete_context(cid)
        services.drop_context(cid)


def test_trace_purge_never_touches_facts(api: Api, store: MemoryStore) -> None:
    # Given an old context fact and old traces
    remember(api, 'mood', 'busy', 'context', ago(200))
    _seed_traces(store)
    facts_before = {t: digest for t, digest in snapshot(store).items() if t in FACT_TABLES}
    # When traces are purged
    sweep(api, 'purge-traces')
    # Then fact tables are untouched and the fact is still current (purging is not expiry)
    assert {t: digest for t, digest in snapshot(store).items() if t in FACT_TABLES} == facts_before
    assert 'mood' in current_attributes(api)


# ---- scheduled sweep handlers over every context ----------------------------------------------


def test_hourly_and_daily_sweeps_cover_every_context(
    api: Api, services: Services, context_id: str, second_context: tuple[str, Api]
) -> None:
    # Given two contexts, each with an 8-day-old context fact, a fresh context fact and a knowledge fact
    other_id, other_api = second_context
    for each in (api, other_api):
        remember(each, 'old_mood', 'busy', 'context', ago(8))
        remember(each, 'mood', 'calm', 'context')
        remember(each, 'employer', 'Acme', 'knowledge')
    # When the hourly EventBridge schedule fires
    hourly = load_function('sweep_hourly').lambda_handler(schedule_event('hourly'), LocalContext())
    # Then both contexts had their old context fact expired
    for each in (api, other_api):
        assert set(current_attributes(each)) == {'mood', 'employer'}
    expired = {r['context']: r['affected'] for r in hourly['results'] if r['sweep'] == 'expire'}
    assert expired[context_id] == 1
    assert expired[other_id] == 1
    assert {r['sweep'] for r in hourly['results']} == {'expire', 'purge-traces', 'reindex'}
    # When the daily schedule fires
    daily = load_function('sweep_daily').lambda_handler(schedule_event('daily'), LocalContext())
    # Then both contexts decayed by exactly one day
    for each in (api, other_api):
        attributes = current_attributes(each)
        assert attributes['mood']['importance'] == pytest.approx(0.475, abs=5e-5)
        assert attributes['employer']['importance'] == pytest.approx(0.796, abs=5e-5)
    decayed = {r['context']: r['affected'] for r in daily['results'] if r['sweep'] == 'decay'}
    assert decayed[context_id] == non_identity_fact_rows(services.store(context_id))
    assert decayed[other_id] == non_identity_fact_rows(services.store(other_id))
    assert decayed[context_id] >= 3
    # When the daily event is delivered again the same day
    again = load_function('sweep_daily').lambda_handler(schedule_event('daily'), LocalContext())
    # Then nothing changes anywhere
    assert {r['context']: r['affected'] for r in again['results'] if r['context'] in (context_id, other_id)} == {context_id: 0, other_id: 0}
    for each in (api, other_api):
        assert current_attributes(each)['mood']['importance'] == pytest.approx(0.475, abs=5e-5)
