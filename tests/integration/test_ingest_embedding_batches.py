"""Ingest (issue 14): a batch job's chunks reach the embedding model in one call, not one call per turn."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api
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
