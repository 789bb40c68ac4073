"""Ingest (issue 14): a job reads its turns, their writers and the extraction vocabulary once, and merges what each of
its turns writes into the vocabulary; every turn still sees exactly the vocabulary a fresh read would give it, region by
region."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.turn_store import TurnStore
from agent_memory.domain import extraction_vocabulary
from agent_memory.domain.extraction_vocabulary import JobVocabulary, Vocabulary
from agent_memory.jobs import ExtractionJob
from tests.extraction_corpus.scoring import load_corpus
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.worker import Worker

NAMED = [
    'Alice manages Bob at Acme.',
    'My name is Sam and I work at Initech.',
    'I live in Oslo.',
    'Bob works at Globex.',
    'Alice prefers green tea.',
    'Carol reports to Alice at Acme.',
    'Bob moved to Bergen.',
    'Dave works at Initech with Carol.',
]


def user_turns(count: int) -> list[str]:
    corpus = [t.text for s in load_corpus() for t in s.turns if t.role == 'user']
    return corpus[:count]


class Comparison:
    """Beside every vocabulary a job's turn is shown: what a fresh read gives at that moment."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pairs: list[tuple[tuple[str, ...], Vocabulary, Vocabulary]] = []
        real = JobVocabulary.current

        def compared(vocabulary: JobVocabulary) -> Vocabulary:
            shown = real(vocabulary)
            self.pairs.append((vocabulary.patterns, shown, real(JobVocabulary(vocabulary.store, vocabulary.patterns))))
            return shown

        monkeypatch.setattr(JobVocabulary, 'current', compared)

    def mismatches(self) -> list[Any]:
        return [(patterns, shown, fresh) for patterns, shown, fresh in self.pairs if shown != fresh]


def send_batch(api: Api, worker: Worker, texts: list[str], **extra: Any) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': t} for t in texts], **extra})
    assert code == 202, body
    jobs = worker.receive()
    assert len(jobs) == 1 and json.loads(jobs[0]['Body'])['turnIds'] == body['turnIds']
    assert worker.deliver(jobs) == {'batchItemFailures': []}


def test_a_job_reads_the_vocabulary_once_for_all_its_turns(api: Api, worker: Worker, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a batch of eight turns queued as one job
    reads: list[tuple[str, ...]] = []
    real = TurnStore.vocabulary

    def counted(self: TurnStore, patterns: Any, *bounds: int) -> Any:
        reads.append(tuple(patterns))
        return real(self, patterns, *bounds)

    monkeypatch.setattr(TurnStore, 'vocabulary', counted)
    # When the worker runs the job
    send_batch(api, worker, NAMED)
    # Then the vocabulary was read once, not once per turn
    assert len(reads) == 1


@pytest.mark.parametrize('limit', [50, 3])
def test_every_turn_of_a_job_sees_the_vocabulary_a_fresh_read_gives(
    api: Api, worker: Worker, store: MemoryStore, monkeypatch: pytest.MonkeyPatch, limit: int
) -> None:
    """``limit`` 3 (12 sampled attribute and relation rows) makes the merge truncate, tie and re-read constantly."""
    # Given the vocabulary bounds, and every vocabulary shown to a turn compared with a fresh read at that moment
    monkeypatch.setattr(extraction_vocabulary, 'VOCABULARY_LIMIT', limit)
    monkeypatch.setattr(extraction_vocabulary, 'SAMPLE', limit * 4)
    comparison = Comparison(monkeypatch)
    # When two jobs of real conversation turns run (the second one's entities partly known)
    send_batch(api, worker, NAMED)
    send_batch(api, worker, user_turns(40))
    # Then each of the 48 turns saw exactly what a fresh read gives, and the vocabulary grew along the way
    assert len(comparison.pairs) == 48
    assert comparison.mismatches() == []
    assert len({shown for _, shown, _ in comparison.pairs}) > 10
    assert store.rows('SELECT VALUE id FROM relates_to;')  # relations were written, so their labels were merged too


def test_rows_a_writer_cannot_read_never_enter_its_job_vocabulary(
    services: Services, context_id: str, worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a writer that may write to team/a but read only shared/*, whose shared turns already named Alice and Bob
    grants = {'memory:read': ['shared/*'], 'memory:write': ['shared/*', 'team/a/*']}
    writer = make_principal(services, context_id, 'writer', grants, 'shared/s')
    send_batch(writer, worker, NAMED[:2], scopes='shared/s')
    comparison = Comparison(monkeypatch)
    # When a job of its turns is written into team/a (new entities, known ones, attributes and relations)
    send_batch(writer, worker, NAMED[2:] + ['Erin works at Hooli.', 'Alice hired Erin.'], scopes='team/a/x')
    # Then no turn was shown anything a fresh read in its region would not show (nothing of team/a)
    assert len(comparison.pairs) == 8
    assert comparison.mismatches() == []
    for _, shown, _ in comparison.pairs:
        assert not {e.name for e in shown.entities} & {'Hooli', 'Erin', 'Globex', 'Oslo', 'Carol', 'Dave'}


def test_a_job_naming_a_turn_that_no_longer_exists_extracts_the_others_and_creates_nothing(
    api: Api, worker: Worker, store: MemoryStore, context_id: str
) -> None:
    # Given a queued turn, and a job that also names a turn id that does not exist (say, purged since)
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'role': 'user', 'content': 'I live in Oslo.'}]})
    assert code == 202
    for message in worker.receive():
        worker.sqs.delete_message(QueueUrl=worker.queue_url, ReceiptHandle=message['ReceiptHandle'])
    job = ExtractionJob(context_id, ('gone0000000000000000000', body['turnIds'][0]))
    worker.sqs.send_message(QueueUrl=worker.queue_url, MessageBody=job.to_json())
    # When the worker runs the job
    assert worker.deliver(worker.receive()) == {'batchItemFailures': []}
    # Then the existing turn is extracted, and starting the job's attempts created no turn for the unknown id
    assert api.call('facts', 'GET', f'/extractions/{body["turnIds"][0]}')[1]['status'] == 'done'
    assert store.rows('SELECT VALUE record::id(id) FROM turn;') == body['turnIds']
