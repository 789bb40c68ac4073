"""What `make dev` prints: a line per request, no metric JSON, and one-line reasons when it cannot start."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from tests.support.gateway import ROOT, Gateway, running_gateway
from tests.support.ports import free_port


def _second_gateway(data_dir: Path, port: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, 'PORT': str(port), 'AGENT_MEMORY_DATA_DIR': str(data_dir), 'PYTHONPATH': 'shared:infra'}
    for name in ('AGENT_MEMORY_DB_URL', 'AGENT_MEMORY_QUEUE_URL', 'AGENT_MEMORY_KEY_SECRET'):
        env.pop(name, None)
    return subprocess.run([sys.executable, '-m', 'local_runtime'], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def _output(gateway: Gateway, pattern: str) -> str:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        output = ''.join(gateway._output)
        if re.search(pattern, output, re.M):
            return output
        time.sleep(0.05)
    raise AssertionError(f'{pattern!r} not in the console:\n{"".join(gateway._output)}')


def test_one_line_per_request_with_context_and_cache_and_no_metric_json(tmp_path: Path) -> None:
    # Given the local service as `make dev` runs it
    with running_gateway(tmp_path / 'data') as gateway:
        # When a client writes and then asks the same question twice
        assert gateway.request('POST', '/api/v1/dev/facts', {'infer': 'triples', 'triples': [
            {'entity': {'type': 'person', 'name': 'Ann'}, 'key': 'plan', 'value': 'Pro'}]})[0] == 200  # fmt: skip
        for _ in range(2):
            assert gateway.request('POST', '/api/v1/dev/chat', {'message': 'What plan is Ann on?'})[0] == 200
        assert gateway.request('GET', '/api/v1/dev/nothing-here')[0] == 404
        output = _output(gateway, r'GET /api/v1/dev/nothing-here 404')
    # Then each request is one line: time, method, path, status, milliseconds, context, and the cache outcome of /chat
    line = r'^\d\d:\d\d:\d\d {} {} {} \d+\.\d ms ctx=dev{}$'
    assert re.search(line.format('POST', '/api/v1/dev/facts', 200, ''), output, re.M), output
    assert re.search(line.format('POST', '/api/v1/dev/chat', 200, ' cache=miss'), output, re.M), output
    assert re.search(line.format('POST', '/api/v1/dev/chat', 200, ' cache=hit'), output, re.M), output
    assert re.search(r'^\d\d:\d\d:\d\d GET /api/v1/health 200 \d+\.\d ms$', output, re.M), output
    # and no EMF metric blob is echoed (AGENT_MEMORY_LOCAL_METRICS=1 asks for them)
    assert '"_aws"' not in output, output


def test_busy_port_and_locked_data_folder_end_with_one_line_and_exit_1(tmp_path: Path) -> None:
    data_dir = tmp_path / 'data'
    with running_gateway(data_dir) as gateway:
        port = int(gateway.base.rsplit(':', 1)[1])
        # When a second service starts on the same port
        busy = _second_gateway(tmp_path / 'other', port)
        # Then it says so in one line, without a traceback
        assert busy.returncode == 1, busy.stderr
        assert f'port {port} on 127.0.0.1 is already in use' in busy.stderr and 'Traceback' not in busy.stderr, busy.stderr
        # When a second service opens the same data folder on another port
        locked = _second_gateway(data_dir, free_port())
        assert locked.returncode == 1, locked.stderr
        assert f'the data folder {data_dir.resolve()} is in use by another process' in locked.stderr, locked.stderr
        assert 'Traceback' not in locked.stderr, locked.stderr
