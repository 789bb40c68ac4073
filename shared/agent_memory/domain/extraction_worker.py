"""The worker's side of an extraction job (re-sending the jobs that never reached it: ``extraction_resend.py``)."""

from __future__ import annotations

from typing import Protocol

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.domain.chunks import split_text
from agent_memory.domain.context_config import effective_config
from agent_memory.domain.extraction_pipeline import Extractors, JobReads, process_turn
from agent_memory.domain.ports import ContextDirectory, MemoryWrites
from agent_memory.embeddings import Embedder
from agent_memory.extraction.errors import ProviderError
from agent_memory.jobs import ExtractionJob, JobQueue
from agent_memory.observability import logger, metrics


class WorkerServices(Protocol):
    """What the extraction worker and the hourly re-send use (``composition.Services`` provides it)."""

    @property
    def control(self) -> ContextDirectory: ...
    @property
    def queue(self) -> JobQueue | None: ...
    @property
    def extractors(self) -> Extractors: ...
    @property
    def embedder(self) -> Embedder: ...
    @property
    def max_receives(self) -> int: ...
    def store(self, context_id: str) -> MemoryWrites: ...


def handle_job(services: WorkerServices, body: str, receive_count: int) -> None:
    """Process each turn in order. A failure is recorded on the turn and re-raised so SQS retries the message;
    on the last allowed receive a transient provider error no longer propagates (the turn is reconciled with
    stage 0), and any other failure marks the turn failed (the message then moves to the DLQ)."""
    job = ExtractionJob.from_json(body)
    context = services.control.get_context(job.context_id)
    if context is None:
        logger.warning('extraction job for a context that no longer exists', extra={'context': job.context_id})
        return
    config = effective_config(context.config)
    store = services.store(job.context_id)
    final = receive_count >= services.max_receives
    reads = JobReads(store, job.turn_ids)
    if len(job.turn_ids) > 1:
        prefetch_chunk_vectors(services, reads)
    for turn_id in job.turn_ids:
        try:
            result = process_turn(store, services.extractors, services.embedder, config, turn_id, final_delivery=final, job=reads)
        except Exception as exc:
            store.turns().mark(turn_id, 'failed' if final else 'queued', _stored_error(exc))
            metrics.add_metric(name='ExtractionFailed', unit=MetricUnit.Count, value=1)
            logger.exception(
                'extraction failed', extra={'context': job.context_id, 'turn': turn_id, 'receive_count': receive_count, 'final': final}
            )
            raise
        logger.info('turn extracted', extra={'context': job.context_id, 'turn': turn_id, 'status': result.status})


def _stored_error(exc: Exception) -> str:
    """What the turn shows as ``error``: a provider failure only as its classified reason (its text can carry the
    provider's file paths or echoed data), anything else as the exception."""
    if isinstance(exc, ProviderError):
        return f'LLM provider {exc.reason}; the message will be retried'
    return f'{type(exc).__name__}: {exc}'[:2000]


def prefetch_chunk_vectors(services: WorkerServices, reads: JobReads) -> None:
    """One model call for every chunk of the job: each turn's commit then finds its chunks' vectors remembered
    (LazyEmbedder's memo) and embeds only the entities and attributes it creates. Only a speed-up: if it fails,
    each turn embeds its own chunks and fails (and is recorded) there."""
    try:
        pending = [turn.content for turn in reads.turns.values() if turn.extraction_status != 'done']
        services.embedder.embed([text for content in pending for text in split_text(content)])
    except Exception:
        logger.warning('chunk prefetch failed; turns embed their own chunks', exc_info=True)
