"""Re-sending extraction jobs that never reached the worker (the hourly sweep). Apart from the worker's module, so
the hourly sweep's cold start does not import the extraction pipeline it never runs."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import utcnow
from agent_memory.config import get_settings
from agent_memory.jobs import ExtractionJob
from agent_memory.observability import metrics

if TYPE_CHECKING:
    from agent_memory.domain.extraction_worker import WorkerServices

RESEND_LIMIT = 500


def resend_stale(services: WorkerServices) -> int:
    """Hourly: turns still not extracted long after their job was last sent get their job again."""
    return _resend(services, utcnow() - dt.timedelta(seconds=get_settings().extraction_stale_seconds), every_page=False)


def resend_all_pending(services: WorkerServices) -> int:
    """At the start of a process whose queue lives in the process (``make dev``): every turn still queued or running
    lost its job with the previous process (a kill -9 runs no shutdown code), so all of them get their job again now,
    not at the first hourly sweep. Never run where the queue outlives the process (SQS still holds those jobs)."""
    return _resend(services, utcnow(), every_page=True)


def _resend(services: WorkerServices, sent_before: dt.datetime, *, every_page: bool) -> int:
    if services.queue is None:
        return 0
    resent = 0
    for context_id in services.control.list_context_ids():
        turns = services.store(context_id).turns()
        while stale := turns.stale_pending(sent_before, RESEND_LIMIT):
            services.queue.send([ExtractionJob(context_id, (t,)) for t in stale])
            turns.mark_enqueued(stale, utcnow())  # now later than sent_before: the next page holds other turns
            resent += len(stale)
            if not every_page or len(stale) < RESEND_LIMIT:
                break
    if resent:
        metrics.add_metric(name='ExtractionResent', unit=MetricUnit.Count, value=resent)
    return resent
