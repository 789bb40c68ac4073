"""Local vector search (db/local_vectors.py, context migration 0021): passages and facts ranked with numpy in the
process, kept exact against writes from any process by the database's clock, filtered by the database like every list
(docs/architecture.md, "Local vector search")."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.connection import is_hosted
from agent_memory.db.local_vectors import LocalVectors, local_vectors_of
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain import lifecycle
from agent_memory.domain.context_config import effective_config
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.round_trips import record_round_trips
from tests.support.tuning import tune

TABLES = ('attribute', 'memory_chunk')


def call(api: Api, function: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    code, result, _ = api.call(function, 'POST', path, body)
    assert code == 200, result
    return result


def note(api: Api, text: str, **extra: Any) -> None:
    call(api, 'facts', '/facts', {'infer': 'none', 'text': text, **extra})


def hits(api: Api, question: str, **extra: Any) -> list[str]:
    return [h['id'] for h in call(api, 'retrieval', '/query', {'query': question, 'k': 10, 'mode': 'vector', **extra})['hits']]


def chunk_of(store: MemoryStore, text: str) -> str:
    keys = store.rows('SELECT VALUE record::id(id) FROM memory_chunk WHERE text = $t;', t=text)
    assert len(keys) == 1, keys
    return str(keys[0])


def vector_of(store: MemoryStore, key: str) -> list[float]:
    return list(store.rows('SELECT VALUE embedding FROM type::record("memory_chunk", $k);', k=key)[0])


def process_that_looked(store: MemoryStore, monkeypatch: pytest.MonkeyPatch, **knobs: Any) -> LocalVectors:
    """Another process's copy of the context's vectors (outside the registry), after its first look."""
    tune(monkeypatch, **knobs)
    other = LocalVectors(384)
    assert other.ready(store, TABLES) == dict.fromkeys(TABLES, True)
    return other


class AnotherContext:
    """Stands for another context's store in the process-wide registry (held weakly, by identity)."""


@pytest.fixture
def notes(api: Api) -> Api:
    call(
        api,
        'facts',
        '/facts',
        {'infer': 'triples', 'triples': [{'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'launch', 'value': 'March 3rd'}]},
    )
    for i, topic in enumerate(['the launch checklist', 'the budget review', 'a hiring plan', 'the office move', 'a team offsite']):
        for j in range(6):
            note(api, f'Note {i}.{j}: {topic} for project Apollo, item {j}, is done.')
    return api


def test_a_query_ranks_passages_and_facts_in_the_process_and_finds_what_the_database_knn_finds(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 30 passages and a fact, When the same questions are asked with the vectors searched in the process and by
    # the database's HNSW KNN, Then the hits are the same, and the first sends no KNN for passages or facts (the texts
    # are ranked in the process too, and their many equal scores are ordered otherwise: tests/integration/test_local_text.py)
    questions = ['When does the Apollo launch happen?', 'Who is being hired?', 'Where is the office moving?']
    recorded = record_round_trips(monkeypatch, store.database)
    local = [hits(notes, q) for q in questions]
    hits(notes, questions[0], mode='hybrid')
    lists = [trip.sql for trip in recorded if '$near_memory_chunk' in trip.sql]
    assert lists and all('$near_attribute' in sql and 'FROM memory_chunk WHERE embedding <|' not in sql for sql in lists)
    tune(monkeypatch, local_vectors_max_rows=0, local_text_max_rows=0)
    assert [hits(notes, q) for q in questions] == local
    assert local_vectors_of(store, 384).rows() == {'attribute': 1, 'memory_chunk': 30, 'entity': 1}


def test_another_process_sees_passages_written_and_deleted_after_its_first_look(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that read the context's vectors
    other = process_that_looked(store, monkeypatch)
    assert other.rows() == {'attribute': 1, 'memory_chunk': 30}
    # When another process stores a passage, Then the next look finds it and it is the nearest to its own vector
    note(notes, 'Ravi adopted a three-legged greyhound called Biscuit.')
    key = chunk_of(store, 'Ravi adopted a three-legged greyhound called Biscuit.')
    other.ready(store, TABLES)
    assert other.rows()['memory_chunk'] == 31 and other.nearest('memory_chunk', vector_of(store, key), 1)[0][0] == key
    # When it is deleted, Then the next look drops it; written again under the same id, it comes back
    vector = vector_of(store, key)
    row = store.rows('SELECT * FROM type::record("memory_chunk", $k);', k=key)[0]
    store.q('DELETE type::record("memory_chunk", $k);', k=key)
    other.ready(store, TABLES)
    assert other.rows()['memory_chunk'] == 30 and key not in [k for k, _ in other.nearest('memory_chunk', vector, 40)]
    store.q('CREATE $row.id CONTENT $row;', row=row)
    other.ready(store, TABLES)
    assert other.nearest('memory_chunk', vector, 1)[0][0] == key


def test_a_passage_given_its_embedding_after_it_was_stored_is_found(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that looked, and a passage stored without its embedding (no write lag: a look sees only what was
    # written since the last one)
    other = process_that_looked(store, monkeypatch, local_vectors_write_lag_seconds=0)
    key = chunk_of(store, 'Note 2.3: a hiring plan for project Apollo, item 3, is done.')
    vector = vector_of(store, key)
    row = store.rows('SELECT * OMIT embedding FROM type::record("memory_chunk", $k);', k=key)[0]
    del row['id']
    store.q('CREATE type::record("memory_chunk", "late_0") CONTENT $row;', row={**row, 'position': 9})
    other.ready(store, TABLES)
    assert 'late_0' not in [k for k, _ in other.nearest('memory_chunk', vector, 40)]
    # When the embedding is written later (an UPDATE that changes no mirrored field), Then the next look finds it
    store.q('UPDATE memory_chunk:late_0 SET embedding = $v WHERE embedding IS NONE;', v=vector)
    other.ready(store, TABLES)
    assert {k for k, _ in other.nearest('memory_chunk', vector, 2)} == {key, 'late_0'}


def test_a_passage_the_caller_may_not_see_never_leaves_the_database(
    services: Services, context_id: str, notes: Api, store: MemoryStore
) -> None:
    # Given a private passage nearest to the question and a caller who reads only the team's region
    note(notes, 'The secret launch code for Apollo is 7731.', scopes=[['/private']])
    bob = make_principal(services, context_id, 'bob', {'memory:read': ['/team/*'], 'memory:write': ['/team/*']}, '/team/bob')
    note(bob, 'Bob thinks the Apollo launch code review went fine.')
    secret = f'memory_chunk:{chunk_of(store, "The secret launch code for Apollo is 7731.")}'
    # When both ask with the vectors searched in the process, Then the admin gets the passage and Bob never does
    assert secret in hits(notes, 'What is the secret launch code for Apollo?')
    assert local_vectors_of(store, 384).rows()['memory_chunk'] == 32
    found = hits(bob, 'What is the secret launch code for Apollo?')
    assert found and secret not in found and all(h.startswith('memory_chunk:') or h.startswith('attribute:') for h in found)


def test_a_table_over_the_budget_is_searched_by_the_database_and_the_process_holds_at_most_the_budget(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a budget smaller than the passages, When a query runs, Then the passages' KNN runs in the database, only the
    # facts are held, and the next query does not count the passages again (retry after local_vectors_retry_seconds)
    tune(monkeypatch, local_vectors_budget_rows=10)
    recorded = record_round_trips(monkeypatch, store.database)
    hits(notes, 'When does the Apollo launch happen?')
    assert any('FROM memory_chunk WHERE embedding <|' in trip.sql for trip in recorded)
    assert any('FROM memory_chunk_lean LIMIT 11;' in trip.sql for trip in recorded)  # its keys, one past the budget
    assert local_vectors_of(store, 384).rows() == {'attribute': 1, 'entity': 1}
    recorded.clear()
    hits(notes, 'When does the Apollo launch happen?')
    assert not any('FROM memory_chunk_lean LIMIT' in trip.sql for trip in recorded)
    # When another context's tables fill the budget, Then the least recently used table goes
    tune(monkeypatch, local_vectors_budget_rows=60)  # a row with its vector weighs 2 (its text 1, its vector 1)
    other = local_vectors_of(elsewhere := AnotherContext(), 384)
    assert other.ready(store, ('memory_chunk',)) == {'memory_chunk': True}
    held = other.weights().get('memory_chunk', 0) + local_vectors_of(store, 384).weights().get('attribute', 0)
    assert held <= 60 and other.rows() == {'memory_chunk': 30} and local_vectors_of(store, 384).rows() == {}
    del elsewhere


def test_the_hourly_sweep_forgets_deletions_older_than_a_day(services: Services, context_id: str, notes: Api, store: MemoryStore) -> None:
    # Given two deleted passages
    store.q('DELETE (SELECT VALUE id FROM memory_chunk WHERE text CONTAINS "office move" LIMIT 2);')
    assert len(store.rows('SELECT * FROM vector_gone;')) == 2
    context = services.control.get_context(context_id)
    assert context is not None
    config = effective_config(context.config)
    # When the trace purge runs now, Then they are kept; a day and more later, Then they are gone
    lifecycle.purge_traces(services.lifecycle(context_id), config, utcnow())
    assert len(store.rows('SELECT * FROM vector_gone;')) == 2
    lifecycle.purge_traces(services.lifecycle(context_id), config, utcnow() + dt.timedelta(days=1, minutes=1))
    assert store.rows('SELECT * FROM vector_gone;') == []


def test_a_table_new_to_the_process_is_read_a_chunk_per_query_and_searched_by_the_database_until_it_is_whole(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 30 passages and 12 rows read per look
    tune(monkeypatch, local_vectors_load_rows=12)
    recorded = record_round_trips(monkeypatch, store.database)
    # When three queries run, Then the first two send the passages' KNN to the database and the third ranks them here
    for expected in (True, True, False):
        recorded.clear()
        hits(notes, 'When does the Apollo launch happen?')
        assert any('FROM memory_chunk WHERE embedding <|' in trip.sql for trip in recorded) is expected
    assert local_vectors_of(store, 384).rows() == {'attribute': 1, 'memory_chunk': 30, 'entity': 1}


def test_a_passage_committed_after_a_look_that_followed_its_stamp_is_found_by_the_next_verifying_look(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that read the vectors, and a passage whose write was stamped before the process's last look but
    # committed after it (simulated: the last look, which also went back write_lag, is moved a minute past its stamp)
    other = process_that_looked(store, monkeypatch, local_vectors_verify_seconds=3600)
    note(notes, 'Ravi adopted a three-legged greyhound called Biscuit.')
    key = chunk_of(store, 'Ravi adopted a three-legged greyhound called Biscuit.')
    held = other._tables['memory_chunk']
    held.looked_at = held.verified_at = store.q('RETURN time::now() + 1m;')[0]
    # When the next looks list only what was written since the last one, Then the passage stays unseen
    other.ready(store, TABLES)
    assert other.rows()['memory_chunk'] == 30
    # When a look goes back write_lag before the last verifying look, Then it is found
    tune(monkeypatch, local_vectors_verify_seconds=0)
    other.ready(store, TABLES)
    assert other.rows()['memory_chunk'] == 31 and other.nearest('memory_chunk', vector_of(store, key), 1)[0][0] == key


def entity_vector(store: MemoryStore, entity_type: str, name: str) -> list[float]:
    return list(store.rows('SELECT VALUE embedding FROM type::record("entity", [$t, $n]);', t=entity_type, n=name)[0])


def test_entities_are_held_under_their_array_keys_and_another_process_sees_them_written_given_a_vector_and_deleted(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that read the entities (ids ``[type, normalised name]``), with no write lag
    tune(monkeypatch, local_vectors_write_lag_seconds=0)
    other = LocalVectors(384)
    assert other.ready(store, ('entity',)) == {'entity': True}
    apollo = entity_vector(store, 'project', 'apollo')
    assert other.nearest('entity', apollo, 1)[0][0] == '["project","apollo"]'
    # When another process stores an entity without its vector, then gives it one, Then the next look finds it
    row = store.rows('SELECT * OMIT embedding, id FROM type::record("entity", ["project", "apollo"]);')[0]
    store.q('CREATE type::record("entity", ["project", "gemini ☄ \\"two\\""]) CONTENT $row;', row={**row, 'name': 'Gemini ☄ "two"'})
    other.ready(store, ('entity',))
    assert other.sizes()['entity'] == 2 and other.rows()['entity'] == 1
    store.q('UPSERT type::record("entity", ["project", "gemini ☄ \\"two\\""]) SET embedding = embedding ?? $v;', v=apollo)
    other.ready(store, ('entity',))
    gemini = '["project","gemini ☄ \\"two\\""]'
    assert other.rows()['entity'] == 2 and {k for k, _ in other.nearest('entity', apollo, 2)} == {'["project","apollo"]', gemini}
    # When it is deleted, Then the next look drops its vector and its name
    store.q('DELETE type::record("entity", ["project", "gemini ☄ \\"two\\""]);')
    other.ready(store, ('entity',))
    assert other.rows()['entity'] == 1 and other.sizes()['entity'] == 1


def test_a_hosted_database_gets_every_list_and_the_process_holds_nothing(
    notes: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the same passages on a database over the network (the flag a ws://, wss:// or http(s):// URL sets)
    questions = ['When does the Apollo launch happen?', 'Who is being hired?', 'Where is the office moving?']
    monkeypatch.setattr(store.db, 'hosted', True)
    recorded = record_round_trips(monkeypatch, store.database)
    # When the questions are asked
    remote = [hits(notes, q) for q in questions]
    # Then the database's KNN answers them, no row is copied into the process, and the hits are the ones the process
    # would have found itself
    assert any('FROM memory_chunk WHERE embedding <|' in trip.sql for trip in recorded)
    assert local_vectors_of(store, 384).rows() == {}
    monkeypatch.setattr(store.db, 'hosted', False)
    assert [hits(notes, q) for q in questions] == remote


@pytest.mark.parametrize(
    ('url', 'hosted'),
    [('ws://db:8000', True), ('WSS://db', True), ('https://db', True), ('http://db', True), ('mem://', False),
     ('surrealkv:///tmp/x', False)],
)  # fmt: skip
def test_which_urls_are_hosted(url: str, hosted: bool) -> None:
    assert is_hosted(url) is hosted
