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
    return store.purge_traces({table: now - dt.timedelta(days=days) for table, days in windows.items() if days is not None})


# An HNSW index is rebuilt once the rows added since its last build reach REINDEX_MIN_NEW_ROWS and either
# REINDEX_MIN_GROWTH of the index or REINDEX_MAX_BACKLOG rows: each unbuilt row costs every KNN ~3.5 µs
# (bench/cache.py), and a rebuild costs ~1 ms per row (126 s at 100k), so big indexes rebuild less often
# but never carry more than ~35 ms of backlog per query.
REINDEX_MIN_NEW_ROWS = 1000
REINDEX_MIN_GROWTH = 0.2
REINDEX_MAX_BACKLOG = 10_000


def reindex(store: LifecycleStore, _config: ContextConfig, now: dt.datetime) -> int:
    """Rebuild each vector index whose table grew enough since its last build; returns how many were rebuilt."""
    rebuilt = 0
    for table, (rows, at_rebuild) in store.vector_index_growth().items():
        added = rows - at_rebuild
        if added >= REINDEX_MIN_NEW_ROWS and (added >= REINDEX_MIN_GROWTH * at_rebuild or added >= REINDEX_MAX_BACKLOG):
            store.rebuild_vector_index(table, rows, now)
            rebuilt += 1
    return rebuilt


SWEEPS: dict[str, Sweep] = {'decay': decay, 'expire': expire, 'purge-traces': purge_traces, 'reindex': reindex}


def run_requested(caller: Caller, name: str, store: LifecycleStore) -> dict[str, Any]:
    """``POST /lifecycle/{sweep}``: one sweep now, for a caller with ``grant:manage`` over the whole context."""
    sweep = SWEEPS.get(name)
    if sweep is None:
        raise NotFound(f'unknown sweep {name!r}; expected one of {sorted(SWEEPS)}')
    if not covered(caller.patterns('grant:manage'), '*'):
        raise Forbidden('lifecycle sweeps need grant:manage over the whole context')
    result = run_sweep(name, sweep, store, caller.context_id, caller.config)
    return {'affected': result['affected'], 'ms': result['ms']}


def run_sweep(name: str, sweep: Sweep, store: LifecycleStore, context_id: str, config: ContextConfig) -> dict[str, Any]:
    started = time.perf_counter()
    affected = sweep(store, config, utcnow())
    ms = round((time.perf_counter() - started) * 1000, 2)
    logger.info('sweep finished', extra={'sweep': name, 'context': context_id, 'affected': affected, 'ms': ms})
    metrics.add_metric(name=f'Sweep{name.title().replace("-", "")}Affected', unit=MetricUnit.Count, value=affected)
    return {'context': context_id, 'affected': affected, 'ms': ms}
