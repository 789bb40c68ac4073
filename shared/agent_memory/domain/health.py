"""``GET /health``: is the database reachable (CONTRACT §10)."""

from __future__ import annotations

from typing import Protocol

from agent_memory.errors import AgentMemoryError
from agent_memory.observability import logger


class Pingable(Protocol):
    def ping(self) -> None: ...


def database_reachable(db: Pingable) -> bool:
    try:
        db.ping()
    except AgentMemoryError as exc:
        logger.warning('health check: database unreachable', extra={'error': exc.detail})
        return False
    return True
