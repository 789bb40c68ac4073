"""The one Logger and Metrics instance every handler and sweep shares."""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics

# Service name and metric namespace come from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE.
os.environ.setdefault('POWERTOOLS_SERVICE_NAME', 'agent-memory')
os.environ.setdefault('POWERTOOLS_METRICS_NAMESPACE', 'AgentMemory')
logger = Logger()
metrics = Metrics()
