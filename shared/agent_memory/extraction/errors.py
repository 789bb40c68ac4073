"""How an extraction stage fails."""

from __future__ import annotations


class ProviderRetryable(Exception):
    """The model provider is rate-limiting, overloaded or unreachable: the SQS message should be retried."""


class ProviderOutputInvalid(Exception):
    """The model's output stayed invalid after the repair retry: keep stage 0 and record this on the turn."""
