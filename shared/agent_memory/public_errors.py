"""What a caller may read of a failure, shared by the REST handlers and the MCP server: 4xx details as they are,
a 5xx redacted to a request id (and logged)."""

from __future__ import annotations

from agent_memory.errors import AgentMemoryError, StoreUnavailable
from agent_memory.observability import logger


def request_ref(request_id: str) -> str:
    return f'internal error; request id req_{request_id}'


def public_detail(exc: AgentMemoryError, request_id: str) -> str:
    if exc.status < 500 or exc.public:
        return exc.detail
    if isinstance(exc, StoreUnavailable):
        logger.warning('database unavailable', extra={'error': exc.detail})
        return 'database unavailable'
    logger.exception('request failed', extra={'status': exc.status})
    return request_ref(request_id)
