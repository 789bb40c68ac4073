"""The one Logger and Metrics instance every handler and sweep shares."""

from __future__ import annotations

from aws_lambda_powertools import Logger, Metrics

logger = Logger(service='agent-memory')
metrics = Metrics(namespace='AgentMemory', service='agent-memory')
