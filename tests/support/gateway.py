"""The local gateway (``python -m local_runtime``, what ``make dev`` runs) as a real process for end-to-end tests:
its own data folder, fixed bootstrap and management keys, HTTP on a free port, output drained as it comes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
KEY, MGMT = 'am_e2e-context-key', 'amm_e2e-management-key'


class Gateway:
    def __init__(self, data_dir: Path, port: int, extra_env: dict[str, str] | None = None) -> None:
        self.base = f'http://127.0.0.1:{port}'
        env = {
            **os.environ,
            'PORT': str(port),
            'AGENT_MEMORY_DATA_DIR': str(data_dir),
            'AGENT_MEMORY_BOOTSTRAP_KEY': KEY,
            'AGENT_MEMORY_MANAGEMENT_KEY': MGMT,
            'AGENT_MEMORY_SWEEP_HOURLY_SECONDS': '1',
            'PYTHONPATH': 'shared:infra',
            **(extra_env or {}),
        }
        for name in (
            'AGENT_MEMORY_DB_URL',
            'AGENT_MEMORY_DB_USER',
            'AGENT_MEMORY_DB_PASSWORD',
            'AGENT_MEMORY_KEY_SECRET',
            'AGENT_MEMORY_QUEUE_URL',
        ):
            env.pop(name, None)  # the gateway picks its own embedded SurrealKV, persisted secret and in-process queue
        env.update(extra_env or {})  # e.g. a hosted database (ws://) and its credentials
        self.process = subprocess.Popen(
            [sys.executable, '-m', 'local_runtime'], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        # Drain the output as it comes: an unread pipe fills (64 KiB of EMF lines and sweep logs) and blocks the gateway.
        self._output: list[str] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._reader.join(timeout=5)
                raise AssertionError(f'gateway exited early: {"".join(self._output)}')
            try:
                if self.request('GET', '/api/v1/health')[0] == 200:
                    return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        raise AssertionError('gateway did not become healthy')

    def request(self, method: str, path: str, body: Any = None, key: str | None = KEY) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if key:
            request.add_header('Authorization', f'Bearer {key}')
        if data:
            request.add_header('Content-Type', 'application/json')
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                raw = response.read()
                return response.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as error:
            raw = error.read()
            return error.code, (json.loads(raw) if raw else None)

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._output.append(line)

    def kill(self) -> str:
        """SIGKILL: no shutdown code runs (a crashed host)."""
        self.process.kill()
        self.process.wait(timeout=30)
        self._reader.join(timeout=5)
        return ''.join(self._output)

    def stop(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=30)
        self._reader.join(timeout=5)
        return code, ''.join(self._output)


@contextmanager
def running_gateway(data_dir: Path, extra_env: dict[str, str] | None = None) -> Iterator[Gateway]:
    """A gateway on a free port for the duration of the block; it must stop cleanly."""
    running = Gateway(data_dir, free_port(), extra_env)
    yield running
    code, output = running.stop()
    assert code == 0, output
