"""What a /chat cache hit costs besides the lookup (issue 14): no embedding model call for texts this process already
embedded, and the turns, both traces and the reinforcement of the cited facts written in one transaction."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.connection import Database
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_store import ABOUT_ENTITY, NEWER_THAN
from agent_memory.embeddings.memo import VectorMemo
from tests.support.chat import QUESTION, chat
from tests.support.handlers import Api
from tests.support.round_trips import RoundTrip, record_round_trips

pytestmark = pytest.mark.usefixtures('llm')


class ModelSpy:
    """Counts the texts that reach the loaded embedding model (the real one, called through)."""

    def __init__(self) -> None:
        self.texts: list[str] = []


@pytest.fixture
def model_spy(services: Services, monkeypatch: pytest.MonkeyPatch) -> ModelSpy:
    spy = ModelSpy()
    monkeypatch.setattr(services.embedder, '_memo', VectorMemo())  # nothing remembered from earlier tests in this process
    model = services.embedder.warm()
    real = model.embed

    def counted(texts: Any) -> list[list[float]]:
        spy.texts += list(texts)
        return real(texts)

    monkeypatch.setattr(model, 'embed', counted)
    return spy


@pytest.fixture
def statements(monkeypatch: pytest.MonkeyPatch, store: MemoryStore) -> Iterator[list[RoundTrip]]:
    """The SQL of every round trip to this context's database (run for real)."""
    yield record_round_trips(monkeypatch, store.database)


def test_a_hit_sends_no_text_to_the_embedding_model(seeded: Api, model_spy: ModelSpy, store: MemoryStore) -> None:
    # Given a cached answer, When the question is asked again, Then the hit embeds nothing (a reply is no passage, so
    # there is no reply chunk to embed either)
    first = chat(seeded)
    assert model_spy.texts  # the miss embedded its question
    model_spy.texts.clear()
    second = chat(seeded)
    assert second['cached'] is True and model_spy.texts == []
    assert store.rows("SELECT VALUE id FROM memory_chunk WHERE role = 'assistant';") == []
    assert first['reply'] == second['reply']


def test_a_hit_reinforces_in_the_same_transaction_as_its_turns_and_traces(
    seeded: Api, store: MemoryStore, statements: list[RoundTrip]
) -> None:
    # Given a cached answer, When it is served, Then one transaction writes the turns, traces and reinforcement
    chat(seeded)
    before = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0]
    statements.clear()
    assert chat(seeded)['cached'] is True
    writes = [sql for sql in (trip.sql for trip in statements) if 'SET importance' in sql or 'CREATE' in sql]
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


def test_only_an_answer_that_may_be_served_carries_its_question_key(seeded: Api, store: MemoryStore) -> None:
    """The same-question lookup walks the key index newest first: hits and uncacheable answers to the same question
    must not be in it, or every lookup would read past all of them before reaching the answer it can serve."""
    # Given a cached answer, When it is hit three times, bypassed once and asked as a second turn, Then only the answers
    # that may be served (the first and the bypass) carry the key
    chat(seeded)
    for _ in range(3):
        assert chat(seeded)['cached'] is True
    session = chat(seeded, QUESTION, bypassCache=True)['sessionId']
    assert chat(seeded, QUESTION, sessionId=session)['cached'] is False  # a second turn: never cacheable
    keyed = store.rows('SELECT cache_eligible, question_key FROM retrieval_trace WHERE question_key IS NOT NONE;')
    assert len(store.rows('SELECT id FROM retrieval_trace;')) == 6
    assert [row['cache_eligible'] for row in keyed] == [True, True]  # the first answer and the bypass (it may seed)
    assert chat(seeded)['cached'] is True


def test_a_hit_reads_its_sources_scopes_with_their_validity(seeded: Api, statements: list[RoundTrip]) -> None:
    """A hit reads twice: the cache lookup, and the validity check, which also returns the scopes the reply's turn is
    stored under (no separate read of the sources' scopes)."""
    # Given a cached answer, When it is served, Then the hit reads the lookup and the validity (with scopes) only
    first = chat(seeded)
    statements.clear()
    second = chat(seeded)
    assert second['cached'] is True and second['memoryUpdates']['replyStored'] is True
    reads = [
        sql for sql in (trip.sql for trip in statements) if 'BEGIN TRANSACTION' not in sql and 'enqueued_at' not in sql
    ]  # not the write, the queue mark
    assert len(reads) == 2 and 'response.* AS answer' in reads[0] and 'newer' in reads[1], reads
    assert second['reply'] == first['reply']


@pytest.mark.parametrize(
    'write',
    [
        "RELATE entity:['person','alice']->relates_to->entity:['person','bob'] CONTENT $edge",
        "RELATE entity:['person','bob']->relates_to->entity:['person','alice'] CONTENT $edge",
        "CREATE action CONTENT object::extend($act, { actor: entity:['person','alice'], object: entity:['person','bob'] })",
        "CREATE action CONTENT object::extend($act, { actor: entity:['person','bob'], object: entity:['person','alice'] })",
    ],
    ids=['edge from the entity', 'edge to the entity', 'action by the entity', 'action on the entity'],
)
def test_a_new_edge_or_action_on_either_side_of_a_cited_entity_invalidates(seeded: Api, store: MemoryStore, write: str) -> None:
    # Given a cached answer citing Alice, When an edge or action names her on either side, Then the next ask misses
    chat(seeded)
    assert chat(seeded)['cached'] is True
    now = utcnow()
    common = {'memory_category': 'knowledge', 'importance_base': 0.5, 'source': {}, 'valid_from': now, 'created_at': now,
              'scope_sets': [['/']]}  # fmt: skip
    store.q("UPSERT entity:['person','bob'] SET name = 'Bob', type = 'person', memory_category = 'knowledge', "
            "importance_base = 0.5, scope_sets = [['/']], created_at = $now, updated_at = $now;", now=now)  # fmt: skip
    store.q(write, edge={**common, 'label': 'knows', 'confirmed_at': now}, act={**common, 'verb': 'met', 'summary': 'Alice met Bob'})
    assert chat(seeded)['cached'] is False


def test_every_validity_probe_is_an_index_range_on_its_entity(store: MemoryStore) -> None:
    """Each "something new about this entity" probe reads the (entity, created_at) index from the answer's time on,
    whatever the entity already has (the old IN/OR form read all of it: retired cache_validity.py, bench/README.md)."""
    # Given the validity probes, When each is explained, Then each is an index range on its entity from the answer's time
    for table, field, index in ABOUT_ENTITY:
        probe = NEWER_THAN.format(table=table, index=index, field=field, ref='$ref').strip('()')
        plan = json.dumps(store.q(f'{probe} EXPLAIN;', ref='person/alice', made=utcnow())[0])
        assert '"operator": "IndexScan"' in plan and f'"index": "{index}"' in plan, plan
        assert "['person/alice'] MoreThan" in plan and 'TableScan' not in plan, plan


def test_a_question_without_a_key_does_not_read_the_keyless_traces(seeded: Api, store: MemoryStore, statements: list[RoundTrip]) -> None:
    """ "what is it?" has no question key: the lookup is the similarity search alone. ``question_key = NONE`` would walk
    the key index over every trace without a key (every /query trace, every answer that may not be served)."""
    # Given keyless /query traces, When a keyless question is asked, Then the lookup is the similarity search alone
    for n in range(3):
        code, _, _ = seeded.call('retrieval', 'POST', '/query', {'query': f'Alice at Acme {n}'})
        assert code == 200
    statements.clear()
    assert chat(seeded, 'what is it?')['cached'] is False
    lookups = [sql for sql in (trip.sql for trip in statements) if 'response.* AS answer' in sql]
    assert len(lookups) == 1 and 'question_key = $key' not in lookups[0] and '<|' in lookups[0], lookups
