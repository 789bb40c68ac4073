"""Lifecycle sweeps for one context or all of them (CONTRACT §9), with a structured log line each."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit

from agent_memory.clock import utcnow
from agent_memory.db.lifecycle_store import LifecycleStore
from agent_memory.domain.auth import Caller
from agent_memory.domain.context_config import ContextConfig
from agent_memory.domain.scopes import covered
from agent_memory.errors import Forbidden, NotFound
from agent_memory.observability import logger, metrics
from agent_memory.tuning import knobs

Sweep = Callable[[LifecycleStore, ContextConfig, dt.datetime], int]


def decay(store: LifecycleStore, _config: ContextConfig, now: dt.datetime, day: str | None = None) -> int:
    """Scheduled runs pass the calendar day (a redelivered event then changes nothing); manual runs always step."""
    return store.decay(day)


def scheduled_decay(store: LifecycleStore, config: ContextConfig, now: dt.datetime) -> int:
    return decay(store, config, now, day=now.date().isoformat())


def expire(store: LifecycleStore, config: ContextConfig, now: dt.datetime) -> int:
    return store.expire(now, now - dt.timedelta(days=config.lifecycle.context_ttl_days))


def purge_traces(store: LifecycleStore, config: ContextConfig, now: dt.datetime) -> int:
    retention = config.trace_retention
    windows = {
        'decision_trace': retention.decision_trace_days,
        'retrieval_trace': retention.retrieval_trace_days,
        'response_trace': retention.response_trace_days,
    }
    # the deletions local vector copies catch up from: kept a day, twice local_vectors_reload_seconds (not counted)
    store.purge_vector_changes(now - dt.timedelta(days=1))
    return store.purge_traces({table: now - dt.timedelta(days=days) for table, days in windows.items() if days is not None})


# An HNSW index is rebuilt once the rows added since its last build reach reindex_min_new_rows and either
# reindex_min_growth of the index or reindex_max_backlog rows (agent_memory/tuning.py): each unbuilt row adds to every
# KNN's cost and a rebuild costs in proportion to the whole index, so big indexes rebuild less often but never carry
# more than reindex_max_backlog unbuilt rows.


def reindex(store: LifecycleStore, _config: ContextConfig, now: dt.datetime) -> int:
    """Rebuild each vector index whose table grew enough since its last build; returns how many were rebuilt."""
    rebuilt, tuned = 0, knobs()
    for table, (rows, at_rebuild) in store.vector_index_growth().items():
        added = rows - at_rebuild
        if added >= tuned.reindex_min_new_rows and (added >= tuned.reindex_min_growth * at_rebuild or added >= tuned.reindex_max_backlog):
            store.rebuild_vector_index(table, rows, now)
            rebuilt += 1
    return rebuilt


SWEEPS: dict[str, Sweep] = {'decay': decay, 'expire': expire, 'purge-traces': purge_traces, 'reindex': reindex}


def requested_sweep(caller: Caller, name: str) -> Sweep:
    """The sweep a caller asks to run now: 404 for an unknown name, 403 without grant:manage over the whole context."""
    if name not in SWEEPS:
        raise NotFound(f'unknown sweep {name!r}; expected one of {sorted(SWEEPS)}')
    if not covered(caller.patterns('grant:manage'), '*'):
        raise Forbidden('lifecycle sweeps need grant:manage over the whole context')
    return SWEEPS[name]


def run_sweep(name: str, sweep: Sweep, store: LifecycleStore, context_id: str, config: ContextConfig) -> dict[str, Any]:
    started = time.perf_counter()
    affected = sweep(store, config, utcnow())
    ms = round((time.perf_counter() - started) * 1000, 2)
    logger.info('sweep finished', extra={'sweep': name, 'context': context_id, 'affected': affected, 'ms': ms})
    metrics.add_metric(name=f'Sweep{name.title().replace("-", "")}Affected', unit=MetricUnit.Count, value=affected)
    return {'context': context_id, 'affected': affected, 'ms': ms}
