"""Liveness: whether the database answers (the health route's only dependency)."""

from __future__ import annotations

from agent_memory.domain.ports import Pingable
from agent_memory.errors import AgentMemoryError
from agent_memory.observability import logger


def database_reachable(db: Pingable) -> bool:
    try:
        db.ping()
    except AgentMemoryError as exc:
        logger.warning('health check: database unreachable', extra={'error': exc.detail})
        return False
    return True
