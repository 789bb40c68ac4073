"""The ``agent-memory`` operator CLI, run as a subprocess against the local gateway over HTTP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.gateway import KEY, MGMT, ROOT, Gateway
from tests.support.ports import free_port


@pytest.fixture(scope='module')
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    running = Gateway(tmp_path_factory.mktemp('cli') / 'data', free_port())
    yield running
    running.stop()


def cli(gateway: Gateway, *args: str, key: str | None = KEY, management: str | None = MGMT,
        script: bool = False) -> tuple[int, Any, str]:  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith('AGENT_MEMORY_')}
    env.update({'AGENT_MEMORY_URL': gateway.base, 'PYTHONPATH': 'shared'})
    if key:
        env['AGENT_MEMORY_KEY'] = key
    if management:
        env['AGENT_MEMORY_MANAGEMENT_KEY'] = management
    command = [str(Path(sys.executable).with_name('agent-memory'))] if script else [sys.executable, '-m', 'agent_memory.cli']
    done = subprocess.run([*command, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    try:
        out = json.loads(done.stdout) if done.stdout.strip() else None
    except json.JSONDecodeError:
        out = done.stdout
    return done.returncode, out, done.stderr


def test_contexts_and_keys_lifecycle(gateway: Gateway) -> None:
    # Given a running gateway, When the CLI creates, lists, shows and deletes a context and mints, rotates, lists and
    # revokes a key, Then each step works and old secrets stop working
    code, created, _ = cli(gateway, 'contexts', 'create', 'acme', '--config', '{"response_cache": {"similarity_threshold": 0.95}}')
    assert code == 0 and created['id'] == 'acme'
    code, listed, _ = cli(gateway, 'contexts', 'list', script=True)  # the installed console script
    assert code == 0 and 'acme' in {c['id'] if isinstance(c, dict) else c for c in listed}
    code, shown, _ = cli(gateway, 'contexts', 'get', 'acme')
    assert code == 0 and shown['config']['response_cache']['similarity_threshold'] == 0.95
    code, _, err = cli(gateway, 'contexts', 'create', 'acme')
    assert code == 1 and 'already exists' in err
    code, minted, _ = cli(gateway, 'keys', 'mint', 'acme', 'admin', 'ops', '--ttl', '3600')
    assert code == 0 and minted['secret'] and minted['expiresAt']
    assert gateway.request('GET', '/api/v1/acme/me', key=minted['secret'])[0] == 200
    code, rotated, _ = cli(gateway, 'keys', 'rotate', 'acme', 'admin', 'ops')
    assert code == 0 and rotated['secret'] != minted['secret']
    assert gateway.request('GET', '/api/v1/acme/me', key=minted['secret'])[0] == 401
    code, keys, _ = cli(gateway, 'keys', 'list', 'acme', 'admin')
    assert code == 0 and [k['name'] for k in keys] == ['ops'] and 'secret' not in keys[0]
    assert cli(gateway, 'keys', 'revoke', 'acme', 'admin', 'ops')[0] == 0
    assert gateway.request('GET', '/api/v1/acme/me', key=rotated['secret'])[0] == 401
    assert cli(gateway, 'contexts', 'delete', 'acme')[0] == 0
    assert cli(gateway, 'contexts', 'get', 'acme')[0] == 1


def test_import_with_progress_then_export_stats_and_sweeps(gateway: Gateway, tmp_path: Path) -> None:
    # Given a JSONL conversation, When the CLI imports it (with a progress bar), then exports, reads stats and runs
    # sweeps, Then every turn is stored and the numbers agree
    lines = [{'role': 'user', 'content': f'Note {i}: the Apollo launch checklist item {i} is done.', 'ts': '2026-11-01T10:00:00Z'}
             for i in range(7)]  # fmt: skip
    lines.append({'role': 'user', 'content': "Hi, I'm Priya and I work at Globex."})
    conversation = tmp_path / 'talk.jsonl'
    conversation.write_text('\n'.join(json.dumps(line) for line in lines) + '\n', encoding='utf-8')
    code, summary, err = cli(gateway, 'import', str(conversation), '--context', 'dev', '--batch', '3')
    assert code == 0, err
    assert summary['turns'] == 8 and summary['queuedForExtraction'] == 8 and summary['sessionId']
    assert '[' in err and '8/8 messages' in err  # the progress bar
    code, turns = gateway.request('GET', f'/api/v1/dev/sessions/{summary["sessionId"]}/turns')
    assert code == 200 and len(turns['turns']) == 8
    export = {'mapping': {'a': {'message': {'author': {'role': 'user'}, 'content': {'parts': ['I moved to Lisbon.']}, 'create_time': 2}},
                          'b': {'message': {'author': {'role': 'assistant'}, 'content': {'parts': ['Noted!']}, 'create_time': 3}},
                          'root': {'message': None}}}  # fmt: skip
    chat_export = tmp_path / 'conversations.json'
    chat_export.write_text(json.dumps(export), encoding='utf-8')
    code, summary, err = cli(gateway, 'import', str(chat_export), '--context', 'dev', '--infer', 'none')
    assert code == 0 and summary['turns'] == 2 and summary['queuedForExtraction'] == 0, err
    assert gateway.request('POST', '/api/v1/dev/chat', {'message': 'Where does Priya work?'})[0] == 200
    code, stats, _ = cli(gateway, 'stats', '--context', 'dev')
    assert code == 0 and stats['responseTracesTotal'] >= 1 and 'cacheHitRate' in stats
    out = tmp_path / 'state.json'
    code, _, err = cli(gateway, 'export', '--context', 'dev', '--output', str(out))
    assert code == 0, err
    exported = json.loads(out.read_text(encoding='utf-8'))
    assert exported['context'] == 'dev' and {'state', 'profile', 'entities'} <= set(exported)
    code, swept, err = cli(gateway, 'sweep', 'expire', '--all', key=None)
    assert code == 0 and 'dev' in {r['context'] for r in swept['results']}, err
    code, swept, _ = cli(gateway, 'sweep', 'decay', '--context', 'dev', management=None)
    assert code == 0 and swept['results'][0]['affected'] >= 0


def test_clear_errors_and_exit_codes(gateway: Gateway, tmp_path: Path) -> None:
    # Given missing keys, a wrong key, a malformed file and an unreachable gateway, When the CLI runs, Then each fails
    # with a clear message and its own exit code
    code, _, err = cli(gateway, 'contexts', 'list', management=None)
    assert code == 1 and 'management key' in err
    code, _, err = cli(gateway, 'stats', '--context', 'dev', key='am_wrong')
    assert code == 1 and 'HTTP 401' in err
    bad = tmp_path / 'bad.jsonl'
    bad.write_text('{"role": "user", "content": "ok"}\n{"role": "narrator", "content": "x"}\n', encoding='utf-8')
    code, _, err = cli(gateway, 'import', str(bad), '--context', 'dev')
    assert code == 2 and 'bad.jsonl:2' in err and 'narrator' in err
    code, _, _ = cli(gateway, 'sweep', 'decay')  # neither --context nor --all
    assert code == 2
    env_gateway = Gateway.__new__(Gateway)
    env_gateway.base = 'http://127.0.0.1:9'
    code, _, err = cli(env_gateway, 'contexts', 'list')
    assert code == 3 and 'cannot reach' in err
