"""Vector fields after migration 0017: typed ``any`` with one ASSERT, so a write that does not touch a row's vector no
longer coerces it element by element, while every vector that could not be searched is still refused (issue 14).

Who refuses what (docs/architecture.md "Vector fields"): the HNSW index a wrong length, a non-array and a
non-number element; the field's ASSERT nested arrays, NULL, NaN, ±inf, all zeros and values beyond a 32-bit float;
the OpenAI-compatible provider's client all of these before the write begins (a 503).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.connection import QueryFailed
from agent_memory.db.migrations import load_migrations
from agent_memory.embeddings.memo import VectorMemo
from agent_memory.embeddings.remote import OpenAIEmbedder
from agent_memory.errors import ProviderUnavailable
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer

DIMENSION = 384
VECTOR_FIELDS = (('memory_chunk', 'embedding'), ('entity', 'embedding'), ('attribute', 'embedding'), ('retrieval_trace', 'query_embedding'))
BEFORE_0017 = ' '.join(f'DEFINE FIELD OVERWRITE {field} ON {table} TYPE option<array<float>>;' for table, field in VECTOR_FIELDS)
UNIT = [1.0 / math.sqrt(DIMENSION)] * DIMENSION


def seed(api: Api, count: int = 12) -> None:
    """Entities and attributes (triples), memory chunks (a stored turn), retrieval traces (a query; a first-turn chat,
    whose trace keeps its question's vector for the response cache)."""
    triples = [{'entity': {'type': 'project', 'name': f'project {i}'}, 'key': 'status', 'value': f'phase {i} of the {w} rollout'}
               for i, w in enumerate(['mobile', 'billing', 'search', 'payments', 'login', 'export'] * (count // 6))]  # fmt: skip
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': triples})[0] == 200
    text = 'We moved the billing rollout to March. The search team hired two engineers. Payments stay on hold.'
    assert api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text})[0] == 200
    assert api.call('retrieval', 'POST', '/query', {'query': 'billing rollout', 'k': 3})[0] == 200
    assert api.call('chat', 'POST', '/chat', {'message': 'When is the billing rollout?'})[0] == 200


def declared(services: Services, database: str, table: str, field: str) -> tuple[str, str | None]:
    """The field's definition and its element field's (``<field>.*``: what a typed array coerces each element by)."""
    fields = services.db.query(database, f'INFO FOR TABLE {table};')[0]['fields']
    return str(fields[field]), fields.get(f'{field}.*')


def vectors_and_neighbours(services: Services, database: str) -> dict[str, Any]:
    """Every stored vector by row, and each row's 5 nearest rows of its table by its own vector (HNSW KNN)."""
    found: dict[str, Any] = {}
    for table, field in VECTOR_FIELDS:
        rows = services.db.query(database, f'SELECT <string> id AS id, {field} AS v FROM {table} WHERE {field} IS NOT NONE;')[0]
        found[table] = {str(r['id']): r['v'] for r in rows}
        sql = f'SELECT <string> id AS id, vector::distance::knn() AS d FROM {table} WHERE {field} <|5,40|> $v ORDER BY d;'
        found[f'{table} neighbours'] = {
            str(r['id']): [(str(n['id']), round(n['d'], 6)) for n in services.db.query(database, sql, {'v': r['v']})[0]] for r in rows
        }
    return found


def test_migration_0017_keeps_every_vector_and_neighbour_and_stops_coercing_elements(services: Services, api: Api) -> None:
    # Given a database holding vectors in every vector table under the fields as they were before migration 0017
    database = services.store(api.context_id).database
    seed(api)
    services.db.query(database, BEFORE_0017 + ' UPDATE memory_chunk, entity, attribute, retrieval_trace SET id = id RETURN NONE;')
    assert all(declared(services, database, t, f)[1] == f'DEFINE FIELD {f}.* ON {t} TYPE float PERMISSIONS FULL' for t, f in VECTOR_FIELDS)
    before = vectors_and_neighbours(services, database)
    assert all(before[table] for table, _ in VECTOR_FIELDS)
    # When the migration runs
    migration = next(m for m in load_migrations('context') if m.version == 17)
    services.db.query(database, migration.sql)
    # Then each field is declared without an element type, every vector is the same and KNN answers the same neighbours
    for table, field in VECTOR_FIELDS:
        definition, elements = declared(services, database, table, field)
        assert definition.startswith(f'DEFINE FIELD {field} ON {table} TYPE any ASSERT') and elements is None, (definition, elements)
    assert vectors_and_neighbours(services, database) == before
    # And a write of other fields keeps the vectors, and a row written after the migration is found by its vector
    services.db.query(database, 'UPDATE attribute SET confidence = confidence RETURN NONE;')
    assert vectors_and_neighbours(services, database)['attribute'] == before['attribute']
    triple = {'entity': {'type': 'project', 'name': 'lighthouse'}, 'key': 'status', 'value': 'the lighthouse launch slipped to May'}
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
    after = vectors_and_neighbours(services, database)
    [new] = set(after['attribute']) - set(before['attribute'])
    assert after['attribute neighbours'][new][0] == (new, 0.0)


def test_migration_0017_drops_stored_vectors_no_index_could_rank_and_keeps_their_rows_writable(services: Services, api: Api) -> None:
    # Given rows whose vectors the old field type let through although no index can rank them (NaN, zeros, ±inf, beyond float32)
    database = services.store(api.context_id).database
    seed(api)
    services.db.query(database, BEFORE_0017)
    broken = {'memory_chunk': [math.nan, *UNIT[1:]], 'attribute': [0.0] * DIMENSION, 'entity': [1e39, *UNIT[1:]],
              'retrieval_trace': [-math.inf, *UNIT[1:]]}  # fmt: skip
    fields = dict(VECTOR_FIELDS)
    ids = {table: services.db.query(database, f'SELECT VALUE id FROM {table} WHERE {fields[table]} IS NOT NONE LIMIT 1;')[0][0]
           for table in broken}  # fmt: skip
    for table, vector in broken.items():
        services.db.query(database, f'UPDATE $id SET {fields[table]} = $v RETURN NONE;', {'id': ids[table], 'v': vector})
    keys = {table: services.db.query(database, 'RETURN <string> $id;', {'id': row})[0] for table, row in ids.items()}
    stored = vectors_and_neighbours(services, database)
    kept = {table: {k: v for k, v in stored[table].items() if k != keys[table]} for table in broken}
    # When the migration runs
    services.db.query(database, next(m for m in load_migrations('context') if m.version == 17).sql)
    # Then those vectors are gone, every other vector is unchanged, and the rows take writes again
    after = vectors_and_neighbours(services, database)
    for table, row in ids.items():
        assert services.db.query(database, f'SELECT VALUE {fields[table]} FROM ONLY $id;', {'id': row})[0] is None
        assert after[table] == kept[table]
        services.db.query(database, 'UPDATE $id SET created_at = created_at RETURN NONE;', {'id': row})
    # And no KNN answers a NaN distance any more
    assert all(d == d for neighbours in after['attribute neighbours'].values() for _, d in neighbours)


BAD_IN_THE_DATABASE = {
    'NaN': [math.nan, *UNIT[1:]],
    'infinity': [math.inf, *UNIT[1:]],
    'minus infinity': [-math.inf, *UNIT[1:]],
    'all zeros': [0.0] * DIMENSION,
    'beyond float32': [1e39, *UNIT[1:]],
    'nested arrays': [UNIT[:192], UNIT[192:]],
    'nested, one number each': [[v] for v in UNIT],
    'NULL': None,  # bound below as SurrealQL NULL (the SDK sends Python None as NONE, which the fields allow)
    'a string element': ['0.05', *UNIT[1:]],
    'a bool element': [True, *UNIT[1:]],
    'wrong dimension': UNIT[:383],
    'empty': [],
    'a string': 'not a vector',
}


@pytest.mark.parametrize(('table', 'field'), VECTOR_FIELDS)
@pytest.mark.parametrize('case', list(BAD_IN_THE_DATABASE))
def test_the_database_refuses_a_vector_that_cannot_be_searched(services: Services, api: Api, table: str, field: str, case: str) -> None:
    # Given a context with rows in every vector table
    store = services.store(api.context_id)
    seed(api, 6)
    row = services.db.query(store.database, f'SELECT VALUE id FROM {table} LIMIT 1;')[0][0]
    before = snapshot(store)
    # When a writer sets the row's vector to a value the index could not search or would rank wrongly
    value = 'NULL' if BAD_IN_THE_DATABASE[case] is None else '$v'
    # Then the engine refuses the statement and the row (and everything else) is unchanged
    with pytest.raises(QueryFailed):
        services.db.query(store.database, f'UPDATE $row SET {field} = {value};', {'row': row, 'v': BAD_IN_THE_DATABASE[case]})
    assert snapshot(store) == before


@pytest.fixture
def provider(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[LlmTestServer]:
    """The service's embeddings served by the OpenAI-compatible test server (384-d), through the real client; no
    remembered vectors, so every text goes to it."""
    server = LlmTestServer(embedding_dimension=DIMENSION).start()
    monkeypatch.setattr(services.embedder, '_loaded', OpenAIEmbedder(server.base_url, 'test-embed', DIMENSION, 'sk-test', 5.0))
    monkeypatch.setattr(services.embedder, '_memo', VectorMemo())
    yield server
    server.stop()


# (A JSON `true` is no case here: the openai client's response model already reads it as 1.0.)
BAD_FROM_THE_PROVIDER = {
    'NaN': ([math.nan, *UNIT[1:]], 'NaN or infinite'),
    'infinity': ([math.inf, *UNIT[1:]], 'NaN or infinite'),
    'all zeros': ([0.0] * DIMENSION, 'all zeros'),
    'nested arrays': ([UNIT[:192], UNIT[192:]], '2 dimensions'),
    'nested, one number each': ([[v] for v in UNIT], 'not a number'),
    'a null element': ([None, *UNIT[1:]], 'not a number'),
    'a string element': (['0.05', *UNIT[1:]], 'not a number'),
    'wrong dimension': (UNIT[:383], '383 dimensions'),
    'a number': (0.5, 'a float where a vector belongs'),
}


@pytest.mark.parametrize('case', list(BAD_FROM_THE_PROVIDER))
def test_a_provider_vector_that_cannot_be_stored_is_a_503_that_changes_nothing(
    services: Services, api: Api, provider: LlmTestServer, case: str
) -> None:
    # Given an embeddings provider that answers a vector no index could search
    store = services.store(api.context_id)
    before = snapshot(store)
    provider.embedding_values, reason = BAD_FROM_THE_PROVIDER[case]
    # When a fact is written
    triple = {'entity': {'type': 'project', 'name': 'lighthouse'}, 'key': 'status', 'value': 'launch slipped to May'}
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})
    # Then it is a 503 and nothing was stored; the reason (logged, not shown: provider details stay private) names the fault
    assert code == 503 and body['title'] == 'Model provider unavailable', body
    assert snapshot(store) == before
    with pytest.raises(ProviderUnavailable, match=reason):
        services.embedder.embed(['a text never embedded before'])
    # And the same write succeeds once the provider answers unit vectors again
    provider.embedding_values = None
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})[0] == 200
