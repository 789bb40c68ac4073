"""What writes need beyond the store, and the extraction hand-off: sending jobs and ``Prefer: wait`` polling."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import utcnow
from agent_memory.domain.extraction_pipeline import Extractors
from agent_memory.domain.ports import MemoryWrites
from agent_memory.embeddings import Embedder
from agent_memory.jobs import ExtractionJob, JobQueue
from agent_memory.observability import logger, metrics

WAIT_POLL_SECONDS = 0.1


@dataclass(frozen=True)
class Pipeline:
    """The job queue (None where none is configured), the extractors, and the embedder every commit uses."""

    queue: JobQueue | None
    extractors: Extractors
    embedder: Embedder


def enqueue(store: MemoryWrites, context_id: str, pipeline: Pipeline, turn_ids: list[str], per_turn: bool = True) -> None:
    """Send the job(s). The turns are already durable: if sending fails they stay queued and the hourly sweep re-sends."""
    jobs = [ExtractionJob(context_id, (t,)) for t in turn_ids] if per_turn else [ExtractionJob(context_id, tuple(turn_ids))]
    try:
        assert pipeline.queue is not None
        pipeline.queue.send(jobs)
    except Exception:  # any transport failure: the write is accepted, the sweep retries the send
        logger.exception('could not enqueue extraction; the hourly sweep will re-send', extra={'turns': turn_ids})
        metrics.add_metric(name='ExtractionEnqueueFailed', unit=MetricUnit.Count, value=len(turn_ids))
        return
    store.turns().mark_enqueued(turn_ids, utcnow())


def wait_for_extractions(store: MemoryWrites, turn_ids: list[str], wait_seconds: float) -> list[dict[str, Any]] | None:
    """``Prefer: wait=N``: poll until every turn's extraction is done, or give up (None)."""
    if wait_seconds <= 0:
        return None
    turns = store.turns()
    deadline = time.monotonic() + wait_seconds
    while True:
        rows = [turns.get_turn(t) for t in turn_ids]
        if all(r is not None and r.extraction_status == 'done' for r in rows):
            return [json.loads(r.extraction_result or '{}') for r in rows if r is not None]
        if time.monotonic() >= deadline:
            return None
        time.sleep(min(WAIT_POLL_SECONDS, max(0.0, deadline - time.monotonic())))
