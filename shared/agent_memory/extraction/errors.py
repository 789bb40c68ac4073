"""How the LLM extraction stage fails, as a short classified reason that is safe to store and show.

The reason is what a turn records as ``llmError`` (CONTRACT §6.2): never the provider's raw text,
which can carry file paths, stack traces or echoed prompt data. The exception message keeps the detail
for the logs only.
"""

from __future__ import annotations

from typing import Literal

LlmFailure = Literal[
    'rate_limited',  # 429
    'timeout',  # no answer within the client timeout
    'unreachable',  # connection refused, DNS, TLS
    'server_error',  # 500 (not a validation error), 502/503/504, 408/409
    'auth_failed',  # 401/403
    'model_not_found',  # 404 naming the model
    'not_found',  # any other 404 (a base URL without /v1)
    'context_exceeded',  # 400: the prompt does not fit the model's context window (extraction/context_window.py)
    'request_rejected',  # 400/422, a 500 whose body says the request was invalid, other 4xx/5xx, in every structured-output mode
    'malformed_response',  # a 2xx body that is not a chat completion
    'invalid_output',  # still not a valid extraction after the repair request
]


class ProviderError(Exception):
    """An LLM-stage failure; ``reason`` is the classified, storable part, the message is for logs."""

    def __init__(self, reason: LlmFailure, detail: str) -> None:
        super().__init__(detail)
        self.reason: LlmFailure = reason


class ProviderRetryable(ProviderError):
    """Transient (rate limit, overload, unreachable, timeout): the SQS message is retried; on the final delivery
    the turn is reconciled with stage 0 and the reason recorded."""


class ProviderOutputInvalid(ProviderError):
    """Will not go away by retrying (invalid output after the repair, a rejected request): keep stage 0 and record it."""
