"""Scheduled sweeps over every context (EventBridge hourly and daily)."""

from __future__ import annotations

import datetime as dt
from typing import Any, Protocol

from agent_memory.clock import utcnow
from agent_memory.domain import lifecycle
from agent_memory.domain.context_config import effective_config
from agent_memory.domain.ports import ContextDirectory, Lifecycle
from agent_memory.errors import AgentMemoryError
from agent_memory.observability import logger


class IdleBuckets(Protocol):
    def purge_idle(self, before: dt.datetime) -> int: ...


class SweepServices(Protocol):
    """What the scheduled sweeps use (``composition.Services`` provides it)."""

    @property
    def control(self) -> ContextDirectory: ...
    @property
    def rate_limits(self) -> IdleBuckets: ...
    def lifecycle(self, context_id: str) -> Lifecycle: ...


HOURLY = (('expire', lifecycle.expire), ('purge-traces', lifecycle.purge_traces), ('reindex', lifecycle.reindex))
DAILY = (('decay', lifecycle.scheduled_decay),)


def run_all(services: SweepServices, sweeps: tuple[tuple[str, lifecycle.Sweep], ...]) -> dict[str, Any]:
    """Run each sweep for each context; one context failing does not stop the others, but fails the run."""
    results, failures = [], []
    for context_id in services.control.list_context_ids():
        context = services.control.get_context(context_id)
        if context is None:
            continue  # deleted while we were sweeping
        config = effective_config(context.config)
        for name, sweep in sweeps:
            try:
                results.append({'sweep': name, **lifecycle.run_sweep(name, sweep, services.lifecycle(context_id), context_id, config)})
            except AgentMemoryError as exc:
                logger.exception('sweep failed', extra={'sweep': name, 'context': context_id})
                failures.append({'sweep': name, 'context': context_id, 'error': exc.detail})
    if failures:
        raise RuntimeError(f'{len(failures)} sweep(s) failed: {failures}')
    return {'results': results}


RATE_BUCKET_IDLE = dt.timedelta(days=1)


def purge_idle_rate_buckets(services: SweepServices) -> int:
    """Buckets of rotated, deleted or idle keys; a bucket idle for a day has refilled for any sane limit."""
    purged = services.rate_limits.purge_idle(utcnow() - RATE_BUCKET_IDLE)
    logger.info('rate buckets purged', extra={'affected': purged})
    return purged
