"""Shared e2e fixtures: a real local gateway process per test module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cli import Cli
from tests.support.gateway import Gateway, running_gateway


@pytest.fixture(scope='module')
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """A fresh gateway (own data folder, dev context and keys) for the module; it must stop cleanly."""
    with running_gateway(tmp_path_factory.mktemp('gateway') / 'data') as running:
        yield running


@pytest.fixture
def cli(gateway: Gateway, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Cli:
    """The ``agent-memory`` CLI's ``main()`` against the module's gateway."""
    return Cli(gateway, monkeypatch, capsys)
