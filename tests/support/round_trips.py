"""Every round trip the service sends to one database, recorded while it still runs for real."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from agent_memory.db.connection import Database


@dataclass(frozen=True)
class RoundTrip:
    sql: str
    params: dict[str, Any] | None


def record_round_trips(monkeypatch: pytest.MonkeyPatch, database: str) -> list[RoundTrip]:
    """Patches ``Database.query`` (undone with the test's monkeypatch) to append each call to ``database`` to the
    returned list before running it."""
    sent: list[RoundTrip] = []
    real = Database.query

    def recorded(self: Database, name: str, sql: str, params: dict[str, Any] | None = None) -> list[Any]:
        if name == database:
            sent.append(RoundTrip(sql, params))
        return real(self, name, sql, params)

    monkeypatch.setattr(Database, 'query', recorded)
    return sent
