"""Embedding providers: the local MiniLM model, the OpenAI-compatible client, plan embedding and the start-up check."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services, check_embedding_model
from agent_memory.config import get_settings
from agent_memory.domain.plan_embeddings import embed_plan
from agent_memory.embeddings import EmbeddingMismatch, LazyEmbedder, build_embedder, embedding_identity
from agent_memory.embeddings.memo import VectorMemo
from agent_memory.embeddings.remote import OpenAIEmbedder
from agent_memory.errors import ProviderUnavailable
from agent_memory.write_ops import CreateAttribute, CreateChunk, EmbedChunk, FactFields, Provenance, UpsertEntity, WritePlan
from tests.support.llm_server import LlmTestServer
from tests.support.ports import free_port


def cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.fixture
def server() -> Iterator[LlmTestServer]:
    running = LlmTestServer().start()
    yield running
    running.stop()


def test_local_model_gives_normalised_384_d_vectors_that_rank_paraphrases_first(services: Services) -> None:
    # Given the local model, When related and unrelated sentences are embedded, Then vectors are unit length, 384-d, and
    # the paraphrase is nearer than the unrelated one
    plan, tier, cat = services.embedder.embed(['what is my current plan?', 'which plan am I on?', 'the cat sat on the warm windowsill'])
    assert len(plan) == 384 and math.isclose(math.sqrt(cosine(plan, plan)), 1.0, rel_tol=1e-4)
    assert cosine(plan, tier) > 0.7 > 0.1 > cosine(plan, cat)
    assert services.embedder.embed([]) == []


def test_local_model_batches_match_single_calls(services: Services) -> None:
    # Given 40 texts (more than one batch), When embedded in a batch and one by one, Then the vectors agree
    texts = [f'sentence number {i} about topic {i % 7}' for i in range(40)]  # more than one batch of 32
    model = services.embedder.warm()  # the model itself: the embedder's memo would answer the single calls from the batch
    batched = model.embed(texts)
    for i in (0, 31, 32, 39):
        assert cosine(batched[i], model.embed([texts[i]])[0]) > 0.9999


def test_the_local_model_threads_sleep_rather_than_spin_between_calls(services: Services) -> None:
    # Given the loaded local model, When its onnxruntime session options are read, Then idle intra-op threads do not
    # spin (spinning burned the 2 vCPUs the database engine shares with it: docs/history/bench-log.md, Session 3)
    model: Any = services.embedder.warm()
    options = model._session.get_session_options()
    assert options.get_session_config_entry('session.intra_op.allow_spinning') == '0'


def test_openai_compatible_provider_uses_the_real_client(server: LlmTestServer) -> None:
    # Given the OpenAI-compatible test server, When three texts are embedded, Then the real client sends one request
    # with the key and model and equal texts get equal vectors
    server.embedding_dimension = 8
    embedder = OpenAIEmbedder(server.base_url, 'text-embed-test', 8, 'sk-test', 5.0)
    vectors = embedder.embed(['alpha', 'beta', 'alpha'])
    assert len(vectors) == 3 and all(len(v) == 8 for v in vectors)
    assert all(math.isclose(cosine(v, v), 1.0, rel_tol=1e-9) for v in vectors)
    assert vectors[0] == vectors[2] != vectors[1]
    request = server.requests[-1]
    assert (
        request.path == '/v1/embeddings'
        and request.body['model'] == 'text-embed-test'
        and request.body['input'] == ['alpha', 'beta', 'alpha']
    )
    assert request.headers['authorization'] == 'Bearer sk-test'
    assert embedder.model_id == 'openai:text-embed-test'


def test_openai_provider_rejects_a_wrong_dimension_and_maps_failures(server: LlmTestServer) -> None:
    # Given a provider answering the wrong dimension, or none listening, When texts are embedded, Then each is a
    # ProviderUnavailable saying why
    server.embedding_dimension = 8
    with pytest.raises(ProviderUnavailable, match='returned 8 dimensions'):
        OpenAIEmbedder(server.base_url, 'm', 16, None, 5.0).embed(['x'])
    with pytest.raises(ProviderUnavailable, match='embedding request failed'):
        OpenAIEmbedder(f'http://127.0.0.1:{free_port()}/v1', 'm', 8, None, 5.0).embed(['x'])


def test_openai_provider_is_selected_by_configuration(server: LlmTestServer) -> None:
    # Given settings naming the openai provider, When the embedder is built, Then it is the OpenAI client with that
    # identity
    settings = dataclasses.replace(
        get_settings(), embedding_provider='openai', embedding_model='e', embedding_dimension=8, embedding_base_url=server.base_url
    )
    assert embedding_identity(settings) == ('openai:e', 8)
    assert isinstance(build_embedder(settings), OpenAIEmbedder)
    with pytest.raises(RuntimeError, match='EMBEDDING_MODEL'):
        build_embedder(dataclasses.replace(settings, embedding_model=None))
    with pytest.raises(RuntimeError, match='384 dimensions'):
        build_embedder(dataclasses.replace(get_settings(), embedding_dimension=768))


def test_a_different_model_than_the_database_holds_refuses_to_start(services: Services) -> None:
    # Given the model recorded at the first start, When a start names another model, Then it refuses with a mismatch
    recorded = services.control.claim_embedding_model('ignored', 1, dt.datetime.now(dt.UTC))
    assert recorded == ('all-MiniLM-L6-v2-int8', 384)  # claimed by the first start; never overwritten
    other = dataclasses.replace(get_settings(), embedding_provider='openai', embedding_model='big', embedding_dimension=1536)
    with pytest.raises(EmbeddingMismatch, match="1536-d 'openai:big'"):
        check_embedding_model(services.control, LazyEmbedder(other))
    check_embedding_model(services.control, LazyEmbedder(get_settings()))  # the recorded model starts fine


def test_plan_embedding_covers_new_rows_and_defers_queued_chunks(services: Services) -> None:
    # Given a plan with a stored chunk, a queued turn's chunk, a new entity and attribute, and a worker's chunk update
    now = dt.datetime.now(dt.UTC)
    plan = WritePlan(now=now, session_id='s')
    chunk: dict[str, Any] = {'session_key': 's', 'turn_id': 't1', 'position': 0, 'scope_sets': [['/']], 'labels': [], 'role': 'user',
                             'created_at': now}  # fmt: skip
    fields = FactFields('knowledge', 0.8, Provenance('upsert', None, None, 'p'), None, now, now, now, [['/']])
    plan.add(
        CreateChunk(id='c1', text='stored literally', deferred=False, **chunk),
        CreateChunk(id='c2', text='queued', deferred=True, **chunk),
        UpsertEntity(('person', 'alice'), 'Alice', 'knowledge', 0.8, [['/']], None, now, now),
        CreateAttribute('a1', ('person', 'alice'), 'home_city', 'Berlin', 1.0, fields),
        EmbedChunk('t1_0', 'a queued turn, embedded by the worker'),
    )
    # When it is embedded
    embed_plan(plan, services.embedder)
    # Then every new row has its vector except the queued chunk, and the attribute is embedded as retrieval scores it
    stored, queued = plan.of(CreateChunk)
    assert stored.embedding is not None and len(stored.embedding) == 384 and queued.embedding is None
    assert len(next(plan.of(UpsertEntity)).embedding or []) == 384
    expected = services.embedder.warm().embed(['Alice home city: Berlin'])[0]  # the model, not the memo
    assert cosine(next(plan.of(CreateAttribute)).embedding or [], expected) > 0.9999
    assert len(next(plan.of(EmbedChunk)).embedding or []) == 384


def test_memo_sends_each_new_text_to_the_model_once_and_forgets_the_oldest(services: Services) -> None:
    # Given a memo of capacity 2, When texts repeat and a third arrives, Then each new text reaches the model once and
    # the oldest is forgotten
    model = services.embedder.warm()
    sent: list[list[str]] = []

    def counted(texts: Any) -> list[list[float]]:
        sent.append(list(texts))
        return model.embed(texts)

    memo = VectorMemo(capacity=2)
    first = memo.embed(['alpha', 'beta', 'alpha'], counted)
    assert sent == [['alpha', 'beta']] and first[0] == first[2] == model.embed(['alpha'])[0]
    assert memo.embed(['beta', 'alpha'], counted) == [first[1], first[0]] and len(sent) == 1
    memo.embed(['gamma'], counted)  # capacity 2: 'beta' (least recently used) is forgotten
    memo.embed(['alpha', 'beta'], counted)
    assert sent[1:] == [['gamma'], ['beta']]
