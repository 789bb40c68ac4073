"""Lean mirrors (context migration 0018): every passage, fact and entity has a row without its embedding, kept equal to
its source row by the engine's events whatever statement writes it, and the read path's text lists and name lookups
read those rows (docs/architecture.md, "Lean mirrors")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.migrations import load_migrations
from agent_memory.db.retrieval_store import RetrievalStore
from agent_memory.rows.reads import ReadFilter
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.round_trips import record_round_trips
from tests.support.tuning import tune

ALICE = {'type': 'person', 'name': 'Alice'}
MIRRORED = {
    'memory_chunk': 'session, turn, position, text, role, labels, scope_sets, created_at',
    'attribute': 'entity, entity_ref, entity.name AS entity_name, key, value, search_text, memory_category, source, '
    'source_turn, superseded_by, valid_from, valid_until, created_at, scope_sets',
    'entity': 'name, type, memory_category, self_principal, scope_sets, created_at',
}


def call(api: Api, function: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    code, result, _ = api.call(function, 'POST', path, body)
    assert code == 200, result
    return result


def remember(api: Api, *triples: dict[str, Any]) -> None:
    call(api, 'facts', '/facts', {'infer': 'triples', 'triples': list(triples)})


def mirrors(store: MemoryStore) -> dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Per source table: its rows' mirrored fields and its lean rows' fields, both by source id."""
    found = {}
    for table, fields in MIRRORED.items():
        lean_fields = fields.replace('entity.name AS entity_name', 'entity_name')
        source, lean = store.q(
            f'SELECT record::id(id) AS id, {fields} FROM {table} ORDER BY id;'
            f'SELECT record::id(id) AS id, {lean_fields} FROM {table}_lean ORDER BY id;'
        )
        found[table] = (source, lean)
    return found


def assert_mirrored(store: MemoryStore) -> None:
    for table, (source, lean) in mirrors(store).items():
        assert lean == source, table


def test_every_write_path_keeps_the_lean_rows_equal_to_their_source_rows(api: Api, store: MemoryStore) -> None:
    # Given facts, a superseding value, a passage and a context-category fact
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'}, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'})
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Lisbon'})
    call(api, 'facts', '/facts', {'infer': 'none', 'text': 'Alice said the Apollo launch moved to March.'})
    remember(api, {'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'status', 'value': 'late', 'memoryCategory': 'context'})
    # Then each source row has its lean row, field for field, and no lean row has an embedding
    assert_mirrored(store)
    assert all(len(lean) == len(source) > 0 for source, lean in mirrors(store).values())
    assert store.q('SELECT VALUE embedding FROM attribute; SELECT VALUE embedding FROM memory_chunk;')[0][0] is not None
    lean_vectors = store.q('SELECT VALUE embedding FROM attribute_lean; SELECT VALUE embedding FROM memory_chunk_lean;')
    assert [set(vectors) for vectors in lean_vectors] == [{None}, {None}]
    # When reads reinforce, the decay clock moves, TTLs pass and a fact is forgotten softly, Then the mirrors follow
    call(api, 'retrieval', '/query', {'query': 'Where does Alice live and what plan is she on?'})
    call(api, 'lifecycle', '/lifecycle/decay')
    store.q("UPDATE attribute SET created_at = created_at - 400d, valid_from = valid_from - 400d WHERE key = 'status';")
    call(api, 'lifecycle', '/lifecycle/expire')
    call(api, 'retrieval', '/forget', {'query': 'Alice plan: Pro', 'limit': 1})
    assert store.q("SELECT VALUE valid_until FROM attribute_lean WHERE key IN ['status', 'plan'];")[0] != [None, None]
    assert_mirrored(store)


def test_an_update_sets_the_mirror_in_place_and_recreates_a_missing_one(api: Api, store: MemoryStore) -> None:
    # Given facts, a passage and an entity with their mirrors
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'}, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'})
    call(api, 'facts', '/facts', {'infer': 'none', 'text': 'Alice said the Apollo launch moved to March.'})
    changes = (
        "UPDATE attribute SET valid_until = time::now(), scope_sets = array::concat(scope_sets, [['team/{0}']]);"
        "UPDATE memory_chunk SET labels = ['{0}'], scope_sets = array::concat(scope_sets, [['team/{0}']]);"
        "UPDATE entity SET scope_sets = array::concat(scope_sets, [['team/{0}']]);"
    )
    # When every source row's mirrored fields change, Then every mirror row equals its source row, set in place
    store.q(changes.format('x'))
    assert_mirrored(store)
    assert store.q('SELECT VALUE labels FROM memory_chunk_lean;')[0] == [['x']]
    # When mirror rows are lost (the entity's too) and their source rows change again, Then they are written whole
    store.q("DELETE attribute_lean WHERE key = 'plan'; DELETE memory_chunk_lean; DELETE entity_lean;")
    store.q(changes.format('y'))
    assert_mirrored(store)
    assert store.q("SELECT VALUE entity_name FROM attribute_lean WHERE key = 'plan';")[0] == ['Alice']


def test_a_read_reinforces_without_rewriting_a_mirror_and_the_lists_show_the_reinforced_importance(api: Api, store: MemoryStore) -> None:
    # Given facts and their mirrors (three: a word in half a table's rows or more scores 0 and is not searched for), and a
    # count of the writes the mirrors receive
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Lisbon'}, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'},
             {'entity': ALICE, 'key': 'editor', 'value': 'Vim'})  # fmt: skip
    mirrored = store.q('SELECT * FROM attribute_lean; SELECT * FROM entity_lean;')
    store.q('DEFINE TABLE lean_writes SCHEMALESS;')
    for table in ('attribute_lean', 'entity_lean'):
        store.q(f'DEFINE EVENT counted ON {table} THEN {{ UPSERT lean_writes:{table} SET n = (n ?? 0) + 1 }};')
    before = store.q("SELECT VALUE importance FROM attribute WHERE key = 'home_city';")[0][0]
    # When a read returns it (reinforcement raises its importance)
    call(api, 'retrieval', '/query', {'query': 'Where is Alice home city Lisbon?'})
    after = store.q("SELECT VALUE importance FROM attribute WHERE key = 'home_city';")[0][0]
    assert after > before
    # Then no mirror row was written, and the text list, read from the mirror, carries the source's new importance
    assert store.q('SELECT * FROM attribute_lean; SELECT * FROM entity_lean;') == mirrored
    assert store.q('SELECT * FROM lean_writes;')[0] == []
    found = RetrievalStore(store).text('attribute', ['lisbon'], 8, ReadFilter(['*'], utcnow()))
    assert [(row.key, row.importance) for row in found] == [('home_city', pytest.approx(after))]
    store.q("UPDATE attribute SET value = 'Porto' WHERE key = 'home_city';")  # a mirrored field: the count does move
    assert store.q('SELECT VALUE n FROM lean_writes;')[0] == [1]


def test_a_purge_leaves_no_lean_row_and_no_text_list_finds_the_purged_words(api: Api, store: MemoryStore) -> None:
    # Given Alice's home city with its history, When it is forgotten with purge
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'}, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'})
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Lisbon'})
    result = call(api, 'retrieval', '/forget', {'query': "Alice's home city is Lisbon", 'purge': True, 'limit': 1})
    assert result['deleted'] >= 1
    # Then no lean row keeps a purged value, the mirrors equal what is left, and the words are found nowhere
    assert store.q("SELECT VALUE value FROM attribute_lean WHERE key = 'home_city';")[0] == []
    assert store.q("SELECT VALUE value FROM attribute_lean WHERE search_text @1@ 'lisbon';")[0] == []
    assert_mirrored(store)
    hits = call(api, 'retrieval', '/query', {'query': 'Lisbon Berlin home city', 'mode': 'bm25'})['hits']
    assert all('Lisbon' not in h['text'] and 'Berlin' not in h['text'] for h in hits), hits


def test_the_migration_fills_the_mirrors_of_rows_written_before_it(services: Services, api: Api, store: MemoryStore) -> None:
    # Given a context whose rows have no lean rows (as before migration 0018), the events removed
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'})
    remember(api, {'entity': ALICE, 'key': 'home_city', 'value': 'Lisbon'})
    call(api, 'facts', '/facts', {'infer': 'none', 'text': 'Alice mentioned a trip to Porto.'})
    store.q('REMOVE EVENT memory_chunk_lean ON memory_chunk; REMOVE EVENT attribute_lean ON attribute; REMOVE EVENT entity_lean ON entity;')
    store.q('DELETE memory_chunk_lean; DELETE attribute_lean; DELETE entity_lean;')
    assert all(lean == [] for _, lean in mirrors(store).values())
    # When the migration runs, Then every row has its lean row and later writes are mirrored again
    migration = next(m for m in load_migrations('context') if m.name == 'lean_mirrors')
    services.db.query(store.database, migration.sql)
    assert_mirrored(store)
    remember(api, {'entity': ALICE, 'key': 'plan', 'value': 'Pro'})
    assert_mirrored(store)
    hits = call(api, 'retrieval', '/query', {'query': 'Porto trip', 'mode': 'bm25'})['hits']
    assert any('Porto' in h['text'] for h in hits), hits


def knn_statements(api: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    recorded = record_round_trips(monkeypatch, store.database)
    call(api, 'retrieval', '/query', {'query': 'When does the Apollo launch happen?'})
    sent = next(trip for trip in recorded if '<|' in trip.sql)
    statements = [line for line in sent.sql.split('\n') if '<|' in line]
    return {next(t for t in ('attribute', 'entity', 'memory_chunk') if f'FROM {t} WHERE embedding' in s): s for s in statements}


def test_a_knn_whose_filter_keeps_every_row_takes_no_spare_neighbours_and_finds_the_same_list(
    services: Services, context_id: str, api: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given passages and facts searched by the database's KNN, a caller who sees everything and one who sees a scope
    tune(monkeypatch, local_vectors_max_rows=0)
    remember(api, {'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'launch', 'value': 'March 3rd'})
    for i in range(40):
        call(api, 'facts', '/facts', {'infer': 'none', 'text': f'Note {i}: the Apollo launch checklist item {i} is done.'})
    scoped = make_principal(services, context_id, 'bob', {'memory:read': ['/team/*']}, '/team/bob')
    # When each asks, Then the passage KNN of the caller who sees everything takes 32 neighbours (the facts' KNN, whose
    # filter drops superseded and expired rows, still takes spares), and its list equals the one 48 neighbours give
    everything = knn_statements(api, store, monkeypatch)
    assert '<|32,' in everything['memory_chunk'] and '<|48,' in everything['attribute'], everything
    recorded = record_round_trips(monkeypatch, store.database)
    call(api, 'retrieval', '/query', {'query': 'When does the Apollo launch happen?'})
    params = next(trip for trip in recorded if '<|' in trip.sql).params or {}
    found = store.q(everything['memory_chunk'], **params)[0]
    assert len(found) == 32 and found == store.q(everything['memory_chunk'].replace('<|32,', '<|48,'), **params)[0]
    assert '<|48,' in knn_statements(scoped, store, monkeypatch)['memory_chunk']


def test_a_facts_search_text_takes_its_entitys_name_from_the_lean_mirror(api: Api, store: MemoryStore) -> None:
    """Migration 0020: an attribute's ``search_text`` reads its entity's name from the entity's lean row (no embedding)
    on every write of the attribute, and from the entity row itself when that lean row is missing."""
    # Given Zoë O'Neil's fact, written with her entity in one transaction
    remember(api, {'entity': {'type': 'person', 'name': "Zoë O'Neil"}, 'key': 'home_city', 'value': 'Berlin'})
    fact = store.q(
        "SELECT id, search_text, string::concat(entity.name, ' ', string::replace(key, '_', ' '), ' ', value) AS before FROM attribute;"
    )[0]
    assert [(f['search_text'], f['before']) for f in fact] == [("Zoë O'Neil home city Berlin",) * 2]

    def rewritten(importance: float) -> str:
        store.q('UPDATE $id SET importance_base = $i RETURN NONE;', id=fact[0]['id'], i=importance)
        return str(store.q('SELECT VALUE search_text FROM ONLY $id;', id=fact[0]['id'])[0])

    # When her lean row names her differently and the fact is written again, Then the fact's text takes that name
    store.q("UPDATE entity_lean SET name = 'Zoe Mirror' RETURN NONE;")
    assert rewritten(1.0) == 'Zoe Mirror home city Berlin'
    # And when her lean row is gone, Then the entity row's own name is read
    store.q('DELETE entity_lean;')
    assert rewritten(0.9) == "Zoë O'Neil home city Berlin"
