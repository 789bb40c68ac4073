"""Domain exceptions, each carrying the HTTP status, title and slug it answers with. Nothing below the API turns them
into responses: the REST layer (api/http.py) renders them as problem+json, the MCP server as tool errors.
``run_with_retry`` re-runs a planned write that lost to a concurrent writer (``WriteConflict``)."""

from __future__ import annotations

import random
import time
from typing import Any


class AgentMemoryError(Exception):
    status = 500
    title = 'Internal error'
    slug = 'internal'
    public = False  # a 5xx whose detail is safe to show (4xx details are always shown)

    def __init__(self, detail: str = '', *, retry_after: int | None = None) -> None:
        super().__init__(detail or self.title)
        self.detail = detail or self.title
        self.retry_after = retry_after


class BadRequest(AgentMemoryError):
    status, title, slug = 400, 'Bad request', 'validation-error'


class Unauthorized(AgentMemoryError):
    status, title, slug = 401, 'Unauthorized', 'unauthorized'


class Forbidden(AgentMemoryError):
    status, title, slug = 403, 'Forbidden', 'forbidden'


class NotFound(AgentMemoryError):
    status, title, slug = 404, 'Not found', 'not-found'


class Conflict(AgentMemoryError):
    status, title, slug = 409, 'Conflict', 'conflict'


class PayloadTooLarge(AgentMemoryError):
    status, title, slug = 413, 'Payload too large', 'payload-too-large'


class Unprocessable(AgentMemoryError):
    status, title, slug = 422, 'Unprocessable entity', 'unprocessable'


class TooManyRequests(AgentMemoryError):
    status, title, slug = 429, 'Too many requests', 'rate-limited'


class NotImplementedYet(AgentMemoryError):
    status, title, slug = 501, 'Not implemented', 'not-implemented'
    public = True  # says what is missing, not what failed


class ProviderUnavailable(AgentMemoryError):
    """A model provider (embeddings or synthesis) failed or timed out; the request changed nothing."""

    status, title, slug = 503, 'Model provider unavailable', 'provider-unavailable'

    def __init__(self, detail: str = '', *, retry_after: int | None = 5) -> None:
        super().__init__(detail, retry_after=retry_after)


class StoreUnavailable(AgentMemoryError):
    status, title, slug = 503, 'Database unavailable', 'unavailable'

    def __init__(self, detail: str = '', *, retry_after: int | None = 5) -> None:
        super().__init__(detail, retry_after=retry_after)


class QueueUnavailable(AgentMemoryError):
    """No extraction queue is configured or reachable; the write is refused before anything is stored."""

    status, title, slug = 503, 'Extraction queue unavailable', 'unavailable'
    public = True


class WriteConflict(AgentMemoryError):
    """A concurrent write changed what a transaction planned against; the caller retries. Still conflicting after
    the bounded retries, it reaches the client as a 503 with Retry-After: busy now, worth retrying, never a 500."""

    status, title, slug = 503, 'Busy', 'write-conflict'

    def __init__(self, detail: str = '', *, retry_after: int | None = 1) -> None:
        super().__init__(detail, retry_after=retry_after)


class AlreadyApplied(AgentMemoryError):
    """The write was applied before (e.g. a redelivered SQS message for a turn that is already done)."""


def run_with_retry(fn: Any, attempts: int = 8) -> Any:
    """Run ``fn`` again when a concurrent writer invalidated its plan (optimistic concurrency).

    The back-off is jittered: writers that collided and slept the same time would collide again."""
    for attempt in range(attempts):
        try:
            return fn()
        except WriteConflict:
            if attempt == attempts - 1:
                raise
            time.sleep(random.uniform(0, 0.01 * 2**attempt))
    raise AssertionError('unreachable')
