"""What a /chat cache hit costs besides the lookup (issue 14): no embedding model call for texts this process already
embedded, and the turns, both traces and the reinforcement of the cited facts written in one transaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.connection import Database
from agent_memory.db.memory_store import MemoryStore
from tests.support.chat import chat
from tests.support.handlers import Api

pytestmark = pytest.mark.usefixtures('llm')


class ModelSpy:
    """Counts the texts that reach the loaded embedding model (the real one, called through)."""

    def __init__(self) -> None:
        self.texts: list[str] = []


@pytest.fixture
def model_spy(services: Services, monkeypatch: pytest.MonkeyPatch) -> ModelSpy:
    spy = ModelSpy()
    model = services.embedder.warm()
    real = model.embed

    def counted(texts: Any) -> list[list[float]]:
        spy.texts += list(texts)
        return real(texts)

    monkeypatch.setattr(model, 'embed', counted)
    return spy


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch, store: MemoryStore) -> Iterator[list[str]]:
    """The SQL of every round trip to this context's database (run for real)."""
    sent: list[str] = []
    real = Database.query

    def recorded(self: Database, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        if database == store.database:
            sent.append(sql)
        return real(self, database, sql, params)

    monkeypatch.setattr(Database, 'query', recorded)
    yield sent


def test_a_hit_sends_no_text_to_the_embedding_model(seeded: Api, model_spy: ModelSpy, store: MemoryStore, services: Services) -> None:
    # Given a cached answer, When the question is asked again, Then the hit embeds nothing and its reply chunk carries
    # the reply's own vector
    first = chat(seeded)
    assert model_spy.texts  # the miss embedded its question and its reply's chunk
    model_spy.texts.clear()
    second = chat(seeded)
    assert second['cached'] is True and model_spy.texts == []
    # the hit's reply chunk carries the reply's own vector, as the model computes it
    stored = store.rows("SELECT text, embedding, created_at FROM memory_chunk WHERE role = 'assistant' ORDER BY created_at DESC LIMIT 1;")
    assert stored[0]['text'] == second['reply']
    assert stored[0]['embedding'] == pytest.approx(services.embedder.warm().embed([second['reply']])[0], abs=1e-6)
    assert first['reply'] == second['reply']


def test_a_hit_reinforces_in_the_same_transaction_as_its_turns_and_traces(seeded: Api, store: MemoryStore, statements: list[str]) -> None:
    # Given a cached answer, When it is served, Then one transaction writes the turns, traces and reinforcement
    chat(seeded)
    before = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    statements.clear()
    assert chat(seeded)['cached'] is True
    writes = [sql for sql in statements if 'SET importance' in sql or 'CREATE' in sql]
    assert len(writes) == 1, writes
    assert 'BEGIN TRANSACTION' in writes[0] and 'SET importance' in writes[0] and 'CREATE' in writes[0]
    after = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    assert after == pytest.approx(min(2.0, before * 1.1))


def test_reinforcement_is_not_applied_when_the_hit_cannot_be_stored(
    seeded: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a cached answer and a store whose write fails, When it is served, Then the request fails and neither
    # importance nor traces changed
    chat(seeded)
    before = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    traces = store.rows('SELECT VALUE id FROM response_trace;')
    real = Database.query

    def failing_commit(self: Database, database: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        if 'BEGIN TRANSACTION' in sql and 'response_trace' in str(params):
            sql = sql.replace('COMMIT TRANSACTION;', "THROW 'disk full';\nCOMMIT TRANSACTION;")
        return real(self, database, sql, params)

    monkeypatch.setattr(Database, 'query', failing_commit)
    code, body, _ = seeded.call('chat', 'POST', '/chat', {'message': "What is Alice's role at Acme?"})
    monkeypatch.undo()
    assert code >= 500, body
    assert store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0] == before
    assert store.rows('SELECT VALUE id FROM response_trace;') == traces
