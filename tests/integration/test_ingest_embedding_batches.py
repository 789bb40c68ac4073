"""Ingest (issue 14): a batch job's chunks reach the embedding model in one call, not one call per turn."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.connection import Database
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.sdk import Vector
from tests.support.handlers import Api
from tests.support.round_trips import record_round_trips
from tests.support.worker import Worker


def test_a_batch_job_embeds_all_its_chunks_in_one_model_call(
    api: Api, worker: Worker, services: Services, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a batch of turns accepted for extraction (nothing embedded yet), When the worker runs its one job, Then all
    # the chunks are embedded in one model call and each turn's commit reuses its vector
    model = services.embedder.warm()
    real = model.embed
    calls: list[list[str]] = []

    def counted(texts: Any) -> list[list[float]]:
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(model, 'embed', counted)
    tag = uuid.uuid4().hex[:8]  # texts no earlier test embedded in this process
    texts = [f'My name is Sam {tag}.', f'I work at Initech {tag}.', f'My favourite colour is teal {tag}.', f'I live in Oslo {tag}.']
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': t} for t in texts]})
    assert code == 202
    jobs = worker.receive()
    assert len(jobs) == 1 and json.loads(jobs[0]['Body'])['turnIds'] == body['turnIds']
    assert calls == []  # accepted: the worker embeds
    assert worker.deliver(jobs) == {'batchItemFailures': []}
    assert sorted(calls[0]) == sorted(texts)
    assert not any(t in call for call in calls[1:] for t in texts)  # each turn's commit found its chunk's vector
    by_text = {row['text']: row['embedding'] for row in store.rows('SELECT text, embedding FROM memory_chunk;') if row['text'] in texts}
    assert set(by_text) == set(texts)
    for text, vector in by_text.items():
        assert vector == pytest.approx(real([text])[0], abs=1e-6)


def test_each_vocabulary_read_of_an_extracted_turn_walks_an_index_newest_first(
    api: Api, worker: Worker, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The extraction context reads the newest entity names, attribute keys and relation labels for every turn; a
    statement without an index on its order sorts its whole table per turn (relation labels did before 0016)."""
    # Given a turn extracted by the worker, When its vocabulary statements are explained, Then each walks an index backward
    sent: list[tuple[str, dict[str, Any]]] = []
    real = Database.query

    def recorded(self: Database, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        if database == store.database:
            sent.append((sql, dict(params or {})))
        return real(self, database, sql, params)

    monkeypatch.setattr(Database, 'query', recorded)
    code, _, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': 'Alice manages Bob at Acme.'}]})
    assert code == 202 and worker.deliver(worker.receive()) == {'batchItemFailures': []}
    monkeypatch.undo()
    vocabulary = [(sql, params) for sql, params in sent if 'SELECT id, label, created_at FROM relates_to' in sql]
    assert vocabulary
    sql, params = vocabulary[0]
    for statement in (s.strip() for s in sql.split(';') if 'ORDER BY' in s):
        plan = json.dumps(store.q(f'{statement} EXPLAIN;', **params)[0])
        assert 'TableScan' not in plan and 'SortByKey' not in plan and '"direction": "Backward"' in plan, (statement, plan)


def test_the_reconciler_reads_open_attributes_without_their_vectors(
    api: Api, worker: Worker, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every extracted attribute's address is read before its turn commits; a row's 384-float embedding is of no use to
    the reconciler and cost more to decode than the rest of the row."""
    # Given a fact already held at an address
    code, _, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': 'My favourite colour is teal.'}]})
    assert code == 202 and worker.deliver(worker.receive()) == {'batchItemFailures': []}
    returned: list[dict[str, Any]] = []
    real = Database.query

    def recorded(self: Database, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        result = real(self, database, sql, params)
        if database == store.database and 'FROM attribute WHERE address' in sql and 'BEGIN' not in sql:
            returned.extend(row for rows in result for row in rows or [] if isinstance(row, dict))
        return result

    monkeypatch.setattr(Database, 'query', recorded)
    # When a turn about the same address is extracted
    code, _, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': 'My favourite colour is red.'}]})
    assert code == 202 and worker.deliver(worker.receive()) == {'batchItemFailures': []}
    # Then the reconciler read the held row, without its vector
    assert returned and all('embedding' not in row and row['key'] == 'favourite_colour' for row in returned), returned


def test_every_vector_a_write_sends_is_bound_as_a_packed_vector(
    api: Api, worker: Worker, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK encodes a plain list one float per call (about 1.3 ms per vector); ``Vector`` is packed in one."""

    # Given every parameter the writes send to the context database recorded
    def vectors(value: Any) -> Iterator[list[Any]]:
        if isinstance(value, dict):
            for item in value.values():
                yield from vectors(item)
        elif isinstance(value, list | tuple):
            if len(value) == 384 and all(isinstance(v, float) for v in value):
                yield value
            else:
                for item in value:
                    yield from vectors(item)

    sent = record_round_trips(monkeypatch, store.database)
    # When a turn is stored with its chunk embedded, and a turn is extracted (chunk, entity and attribute vectors)
    assert api.call('facts', 'POST', '/facts', {'text': 'Remember the blue door.', 'infer': 'none'})[0] == 200
    code, _, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': 'I work at Initech.'}]})
    assert code == 202 and worker.deliver(worker.receive()) == {'batchItemFailures': []}
    # Then every vector sent was a Vector
    found = [v for trip in sent for v in vectors(trip.params)]
    assert len(found) >= 3
    assert all(isinstance(v, Vector) for v in found), [type(v) for v in found]
