"""Re-sending extraction jobs that never reached the worker (the hourly sweep). Apart from the worker's module, so
the hourly sweep's cold start does not import the extraction pipeline it never runs."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import utcnow
from agent_memory.config import get_settings
from agent_memory.db.turn_store import TurnStore
from agent_memory.jobs import ExtractionJob
from agent_memory.observability import metrics

if TYPE_CHECKING:
    from agent_memory.domain.extraction_worker import WorkerServices

RESEND_LIMIT = 500


def resend_stale(services: WorkerServices) -> int:
    """Hourly: turns still not extracted long after their job was last sent get their job again."""
    if services.queue is None:
        return 0
    resent = 0
    stale_after = dt.timedelta(seconds=get_settings().extraction_stale_seconds)
    for context_id in services.control.list_context_ids():
        store = services.store(context_id)
        turns = TurnStore(store)
        stale = turns.stale_pending(utcnow() - stale_after, RESEND_LIMIT)
        if stale:
            services.queue.send([ExtractionJob(context_id, (t,)) for t in stale])
            turns.mark_enqueued(stale, utcnow())
            resent += len(stale)
    if resent:
        metrics.add_metric(name='ExtractionResent', unit=MetricUnit.Count, value=resent)
    return resent
