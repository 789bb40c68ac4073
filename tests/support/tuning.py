"""Change tuning knobs (agent_memory/tuning.py) for one test; the monkeypatch restores them afterwards."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agent_memory import tuning


def tune(monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    """Replace the knobs in force by a copy with ``changes`` (unknown names fail: ``dataclasses.replace`` checks)."""
    monkeypatch.setattr(tuning, 'TUNING', dataclasses.replace(tuning.TUNING, **changes))
