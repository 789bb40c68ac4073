"""The repository on embedded SurrealDB: migrations, atomic plans, optimistic concurrency, outages."""

from __future__ import annotations

import gc
import threading
from typing import Any

import pytest

from agent_memory.clock import new_id, utcnow
from agent_memory.db import migrations
from agent_memory.db.connection import Database, context_db_name
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.migrations import ensure_migrated, forget_migrated, load_migrations
from agent_memory.domain import facts
from agent_memory.domain.auth import Caller
from agent_memory.errors import StoreUnavailable, WriteConflict
from agent_memory.models import FactsRequest
from agent_memory.write_ops import CreateAttribute, CreateSession, FactFields, GuardAddress, Provenance, UpsertEntity, WritePlan
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.ports import free_port


def test_migrations_are_recorded_and_applied_once(services: Any, context_id: str) -> None:
    # Given a context whose database was migrated at creation
    database = context_db_name(context_id)
    versions = [m.version for m in load_migrations('context')]
    recorded = services.db.query(database, 'SELECT VALUE record::id(id) FROM schema_migration ORDER BY id;')[0]
    assert recorded == versions
    # When the runner is asked again, even after forgetting its in-process cache
    forget_migrated(services.db, database)
    # Then nothing is applied twice
    assert ensure_migrated(services.db, database, 'context') == []


@pytest.mark.parametrize('kind', ['context', 'control'])
def test_every_migration_has_its_own_version_number(kind: str) -> None:
    # Given the shipped migrations, Then no two share a number (the runner would skip the second one silently)
    # When the version numbers are listed
    versions = [m.version for m in load_migrations(kind)]
    assert versions and len(versions) == len(set(versions))


def test_two_migration_files_with_one_number_are_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # Given a migrations folder where two files claim version 7
    # When the migrations are loaded, Then the duplicate number is refused
    folder = tmp_path / 'migrations' / 'context'
    folder.mkdir(parents=True)
    for name in ('0007_a.surql', '0007_b.surql'):
        (folder / name).write_text('RETURN 1;', encoding='utf-8')
    monkeypatch.setattr(migrations.resources, 'files', lambda _package: tmp_path)
    load_migrations.cache_clear()
    try:
        # When they are loaded, then the clash is an error naming both
        with pytest.raises(RuntimeError, match='0007_a.*0007_b'):
            load_migrations('context')
    finally:
        load_migrations.cache_clear()


def test_the_migrated_cache_holds_no_closed_connection() -> None:
    # Given a connection that was migrated and then dropped
    # When it is closed and another connection is migrated
    first = Database('mem://', 'agent_memory')
    ensure_migrated(first, 'cachecheck', 'context')
    assert 'cachecheck' in migrations._migrated[first]
    held_before = len(migrations._migrated)
    del first
    gc.collect()
    # Then the cache forgot it, so a later connection (which may get the same id()) is migrated afresh
    assert len(migrations._migrated) == held_before - 1
    second = Database('mem://', 'agent_memory')
    assert ensure_migrated(second, 'cachecheck', 'context') == [m.version for m in load_migrations('context')]


def test_a_runner_that_lost_the_race_skips_the_migration(services: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a database another cold start has just migrated
    database = f'race_{new_id()}'
    assert ensure_migrated(services.db, database, 'context') == [m.version for m in load_migrations('context')]
    # When a second runner read "nothing applied" before the first committed (simulated stale read)
    real_query = services.db.query

    def stale_bookkeeping(db_name: str, sql: str, params: Any = None) -> list[Any]:
        result = real_query(db_name, sql, params)
        return [*result[:-1], []] if 'FROM schema_migration' in sql else result

    monkeypatch.setattr(services.db, 'query', stale_bookkeeping)
    forget_migrated(services.db, database)
    # Then its attempt conflicts on the version record and it applies nothing
    assert ensure_migrated(services.db, database, 'context') == []


def _plan(store: MemoryStore, value: str, seen: list[str]) -> tuple[WritePlan, str]:
    now = utcnow()
    session = f'sess_{new_id()}'
    plan = WritePlan(now=now, session_id=session)
    fields = FactFields('knowledge', 0.8, Provenance('upsert', None, None, 'admin'), None, now, now, now, [['/']])
    attr_id = new_id()
    plan.add(
        CreateSession(session, session, 'admin', [['/']], {}, now),
        UpsertEntity(('person', 'alice'), 'Alice', 'knowledge', 0.8, [['/']], None, now, now),
        GuardAddress(('person', 'alice'), 'plan', tuple(seen)),
        CreateAttribute(attr_id, ('person', 'alice'), 'plan', value, 1.0, fields),
    )
    return plan, attr_id


def test_a_stale_plan_is_refused_whole(store: MemoryStore) -> None:
    # Given a plan made when the address was empty, applied once
    first, _ = _plan(store, 'Free', [])
    store.apply(first)
    before = snapshot(store)
    # When a second plan that also believed the address empty is applied
    stale, _ = _plan(store, 'Pro', [])
    # Then the transaction throws and nothing of it (session, entity update, attribute) lands
    with pytest.raises(WriteConflict):
        store.apply(stale)
    assert snapshot(store) == before


def _in_threads(work: list[Any]) -> None:
    threads = [threading.Thread(target=fn) for fn in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_concurrent_writers_on_one_address_leave_one_clean_chain(api: Api, store: MemoryStore, admin: Caller, services: Any) -> None:
    # Given several writers (separate Lambda containers) writing different values to one entity+key at once
    # When they all commit
    values = [f'plan-{i}' for i in range(6)]
    statuses: list[int] = []

    def write(value: str) -> None:
        request = FactsRequest.model_validate(
            {'infer': 'triples', 'triples': [{'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'plan', 'value': value}]}
        )
        statuses.append(facts.remember(store, admin, services.pipeline(), request, request.model_dump(mode='json'), None)[0])

    _in_threads([lambda v=v: write(v) for v in values])

    # Then every write succeeded, exactly one value is current and the chain links every row once
    assert statuses == [200] * len(values)
    _, entity, _ = api.call('entities', 'GET', '/entities/person/alice')
    assert len([a for a in entity['attributes'] if a['key'] == 'plan']) == 1
    _, history, _ = api.call('entities', 'GET', '/entities/person/alice/history/plan')
    rows = history['history']
    assert sorted(r['value'] for r in rows) == sorted(values)
    assert sum(r['supersededBy'] is None for r in rows) == 1
    successors = [r['supersededBy'] for r in rows if r['supersededBy']]
    assert len(successors) == len(set(successors)) == len(values) - 1


def test_concurrent_turns_get_distinct_sequence_numbers(api: Api, store: MemoryStore, admin: Caller, services: Any) -> None:
    # Given one session, When eight turns are appended to it at once, Then they get sequence numbers 1 to 8
    _, session, _ = api.call('sessions', 'POST', '/sessions', {})

    def append(i: int) -> None:
        request = FactsRequest.model_validate({'infer': 'none', 'text': f'turn {i}', 'session_id': session['id']})
        facts.remember(store, admin, services.pipeline(), request, request.model_dump(mode='json'), None)

    _in_threads([lambda i=i: append(i) for i in range(8)])
    _, turns, _ = api.call('sessions', 'GET', f'/sessions/{session["id"]}/turns')
    assert [t['seq'] for t in turns['turns']] == list(range(1, 9))


def test_unreachable_hosted_database_is_store_unavailable() -> None:
    # Given a hosted-database URL on a port nothing listens on, When the service pings it, Then it is a 503, not a crash
    database = Database(f'ws://127.0.0.1:{free_port()}/rpc', 'agent_memory')
    with pytest.raises(StoreUnavailable):
        database.ping()
