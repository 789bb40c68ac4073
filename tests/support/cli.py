"""Running the ``agent-memory`` CLI's ``main()`` in the test process against a gateway, with a clean environment."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from agent_memory.cli.__main__ import main
from tests.support.gateway import KEY, MGMT, Gateway


class Cli:
    """Runs ``main()`` with a clean ``AGENT_MEMORY_*`` environment: (exit code, stdout as JSON or text, stderr)."""

    def __init__(self, gateway: Gateway, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
        self.gateway, self.monkeypatch, self.capsys = gateway, monkeypatch, capsys

    def __call__(self, *args: str, key: str | None = KEY, management: str | None = MGMT,
                 env: dict[str, str] | None = None) -> tuple[int, Any, str]:  # fmt: skip
        for name in [n for n in os.environ if n.startswith('AGENT_MEMORY_')] + ['PORT']:
            self.monkeypatch.delenv(name, raising=False)
        values = {'AGENT_MEMORY_URL': self.gateway.base, 'AGENT_MEMORY_KEY': key, 'AGENT_MEMORY_MANAGEMENT_KEY': management, **(env or {})}
        for name, value in values.items():
            if value is not None:
                self.monkeypatch.setenv(name, value)
        self.capsys.readouterr()
        try:
            code = main(list(args))
        except SystemExit as exit_:  # --help
            code = int(exit_.code or 0)
        out, err = self.capsys.readouterr()
        try:
            return code, json.loads(out) if out.strip() else None, err
        except json.JSONDecodeError:
            return code, out, err
