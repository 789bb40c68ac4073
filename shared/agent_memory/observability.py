"""The one Logger and Metrics instance every handler and sweep shares."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics.provider.cloudwatch_emf.cloudwatch import AmazonCloudWatchEMFProvider

# Service name and metric namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE.
os.environ.setdefault('POWERTOOLS_SERVICE_NAME', 'agent-memory')
os.environ.setdefault('POWERTOOLS_METRICS_NAMESPACE', 'AgentMemory')
F = TypeVar('F', bound=Callable[..., Any])
_METRICS_LOCK = threading.RLock()


def _locked(method: F) -> F:
    @functools.wraps(method)
    def run(*args: Any, **kwargs: Any) -> Any:
        with _METRICS_LOCK:
            return method(*args, **kwargs)

    return run  # type: ignore[return-value]


class ThreadSafeEMFProvider(AmazonCloudWatchEMFProvider):
    """Powertools keeps one metric set per process and is not thread-safe. Lambda runs one invocation at a time,
    but the local gateway runs handlers on request threads beside the in-process worker: a flush racing another
    flush (or an ``add_metric``) raised inside ``log_metrics`` and the request died without a response. Every
    read-modify-write of the set, the flush included, holds one lock, so each metric is emitted exactly once."""

    add_metric = _locked(AmazonCloudWatchEMFProvider.add_metric)
    add_dimension = _locked(AmazonCloudWatchEMFProvider.add_dimension)
    add_dimensions = _locked(AmazonCloudWatchEMFProvider.add_dimensions)
    add_metadata = _locked(AmazonCloudWatchEMFProvider.add_metadata)
    serialize_metric_set = _locked(AmazonCloudWatchEMFProvider.serialize_metric_set)
    flush_metrics = _locked(AmazonCloudWatchEMFProvider.flush_metrics)
    clear_metrics = _locked(AmazonCloudWatchEMFProvider.clear_metrics)


logger = Logger()
# The provider shares Powertools' class-level sets, so a Metrics() made elsewhere still lands in the same blob.
metrics = Metrics(
    provider=ThreadSafeEMFProvider(
        metric_set=Metrics._metrics,
        dimension_set=Metrics._dimensions,
        metadata_set=Metrics._metadata,
        default_dimensions=Metrics._default_dimensions,
    )
)
