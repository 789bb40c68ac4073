"""The ``agent-memory`` operator CLI against the local gateway over HTTP: ``main()`` in this process (and the installed
console script once, as a subprocess)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_memory.cli.__main__ import EXAMPLES, default_url, parser
from agent_memory.cli.client import Client
from tests.support.cli import Cli
from tests.support.gateway import KEY, MGMT, ROOT, Gateway
from tests.support.ports import free_port

FIXTURES = ROOT / 'tests' / 'fixtures' / 'conversations'


@pytest.fixture(scope='module')
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    running = Gateway(tmp_path_factory.mktemp('cli') / 'data', free_port())
    yield running
    running.stop()


def test_contexts_and_keys_lifecycle(gateway: Gateway, cli: Cli) -> None:
    # Given a running gateway, When the CLI creates, lists, shows and deletes a context and mints, rotates, lists and
    # revokes a key, Then each step works and old secrets stop working
    code, created, _ = cli('contexts', 'create', 'acme', '--config', '{"response_cache": {"similarity_threshold": 0.95}}')
    assert code == 0 and created['id'] == 'acme'
    code, shown, _ = cli('contexts', 'get', 'acme')
    assert code == 0 and shown['config']['response_cache']['similarity_threshold'] == 0.95
    code, _, err = cli('contexts', 'create', 'acme')
    assert code == 1 and 'already exists' in err
    code, minted, _ = cli('keys', 'mint', 'acme', 'admin', 'ops', '--ttl', '3600')
    assert code == 0 and minted['secret'] and minted['expiresAt']
    assert gateway.request('GET', '/api/v1/acme/me', key=minted['secret'])[0] == 200
    code, rotated, _ = cli('keys', 'rotate', 'acme', 'admin', 'ops')
    assert code == 0 and rotated['secret'] != minted['secret']
    assert gateway.request('GET', '/api/v1/acme/me', key=minted['secret'])[0] == 401
    code, keys, _ = cli('keys', 'list', 'acme', 'admin')
    assert code == 0 and [k['name'] for k in keys] == ['ops'] and 'secret' not in keys[0]
    assert cli('keys', 'revoke', 'acme', 'admin', 'ops')[0] == 0
    assert gateway.request('GET', '/api/v1/acme/me', key=rotated['secret'])[0] == 401
    assert cli('contexts', 'delete', 'acme')[0] == 0
    assert cli('contexts', 'get', 'acme')[0] == 1


def test_the_installed_console_script_runs(gateway: Gateway) -> None:
    # Given the console script the package installs, When it lists contexts with options after the command, Then it works
    env = {k: v for k, v in os.environ.items() if not k.startswith('AGENT_MEMORY_')} | {'PYTHONPATH': 'shared'}  # this checkout's code
    command = [str(Path(sys.executable).with_name('agent-memory')), 'contexts', 'list', '--url', gateway.base, '--management-key', MGMT]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and 'dev' in {c['id'] for c in json.loads(done.stdout)}, done.stderr


def test_options_go_anywhere_and_the_context_defaults_to_the_keys(gateway: Gateway, cli: Cli) -> None:
    # Given only a URL and a key, placed after the command (or before it, or mixed), When stats and whoami run without
    # --context, Then the context is the one the key belongs to
    bare = {'key': None, 'management': None, 'env': {'AGENT_MEMORY_URL': 'http://127.0.0.1:9'}}
    code, stats, err = cli('stats', '--url', gateway.base, '--key', KEY, **bare)  # type: ignore[arg-type]
    assert code == 0 and 'cacheHitRate' in stats, err
    code, stats, err = cli('--key', KEY, 'stats', '--window-hours', '2', '--url', gateway.base, **bare)  # type: ignore[arg-type]
    assert code == 0 and 'cacheHitRate' in stats, err
    code, who, _ = cli('whoami', f'--key={KEY}', f'--url={gateway.base}', **bare)  # type: ignore[arg-type]
    assert code == 0 and who['contextId'] == 'dev' and who['principalId'] == 'admin'
    # an explicit --context wins, and is checked by the API like any other
    code, _, err = cli('stats', '--context', 'elsewhere')
    assert code == 1 and 'HTTP 401' in err
    # a management key alone does not say which context
    code, _, err = cli('stats', key=None)
    assert code == 2 and 'which context? pass --context' in err


def test_no_key_is_ever_printed(gateway: Gateway, cli: Cli) -> None:
    # Given keys in every place an error could echo them, When each command fails, Then no output holds a key
    wrong = 'am_wrongButLooksReal0123456789abcdefghijklmnopq'
    code, _, err = cli('stats', '--key', wrong)  # the API refuses the key
    assert code == 1 and 'HTTP 401' in err and wrong not in err
    code, _, err = cli('stats', wrong)  # a key typed where an argument goes
    assert code == 2 and 'unrecognized arguments' in err and wrong not in err and 'am_***' in err
    code, _, err = cli('stats', '--bogus', f'--key={wrong}')
    assert code == 2 and wrong not in err
    odd = 'operator-secret-management-value'  # a management key of any shape
    code, _, err = cli('contexts', 'lsit', '--management-key', odd, management=None)
    assert code == 2 and 'invalid choice' in err and odd not in err
    code, _, err = cli('contexts', 'list', odd, management=odd)
    assert code == 2 and odd not in err and '***' in err
    code, _, err = cli('stats', '--url', f'http://user:{odd}@127.0.0.1:9')  # credentials in an unreachable URL
    assert code == 3 and 'cannot reach http://127.0.0.1:9' in err and odd not in err
    for code_out_err in (cli('stats', '--key', wrong), cli('whoami', '--key', wrong)):
        assert wrong not in code_out_err[2] and wrong not in str(code_out_err[1])


def test_the_default_url_follows_port(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given no AGENT_MEMORY_URL, When PORT is set (as `make dev` reads it), Then the default URL uses it
    monkeypatch.delenv('AGENT_MEMORY_URL', raising=False)
    monkeypatch.setenv('PORT', '4123')
    assert default_url() == 'http://127.0.0.1:4123'
    monkeypatch.delenv('PORT')
    assert default_url() == 'http://127.0.0.1:3000'
    monkeypatch.setenv('AGENT_MEMORY_URL', 'https://memory.example.com')
    assert default_url() == 'https://memory.example.com'


def test_every_command_has_help_with_examples(cli: Cli) -> None:
    # Given each command, When --help is asked for (before or after other options), Then it exits 0 with examples
    commands = sorted(parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert set(commands) >= {'whoami', 'contexts', 'keys', 'sweep', 'export', 'import-conversations', 'stats'}
    assert set(commands) <= set(EXAMPLES)
    for command in commands:
        code, out, _ = cli(command, '--help')
        assert code == 0 and 'examples:' in out and 'agent-memory ' + command.split()[0] in out, command
    code, out, _ = cli('--help')
    assert code == 0 and 'import-conversations' in out and 'Exit codes' in out


def test_import_of_chat_exports_waits_for_extraction(gateway: Gateway, cli: Cli) -> None:
    # Given a ChatGPT export, When imported with --wait, Then each conversation is a session of its current branch, the
    # skipped messages are counted, and the facts were extracted before the command returned
    code, summary, err = cli('import-conversations', str(FIXTURES / 'chatgpt_conversations.json'), '--wait')
    assert code == 0, err
    assert summary['context'] == 'dev' and summary['conversations'] == 2 and len(summary['sessions']) == 2
    assert summary['turns'] == 5 and summary['queuedForExtraction'] == 5
    assert summary['skipped'] == {'empty': 3, 'system': 1, 'tool call': 1, 'tool': 1}
    assert summary['extraction'] == {'done': 5, 'failed': 0, 'waiting': 0, 'timedOut': False, 'failures': []}
    assert 'import [' in err and '5/5 messages' in err and 'extraction [' in err and '5/5 turns' in err
    code, turns = gateway.request('GET', f'/api/v1/dev/sessions/{summary["sessions"][0]}/turns')
    expected = [('user', 'done'), ('assistant', 'done'), ('user', 'done')]
    assert code == 200 and [(t['role'], t['extraction']) for t in turns['turns']] == expected
    assert turns['turns'][0]['observedAt'] == '2025-12-01T10:00:10.250000Z'
    code, employer = gateway.request('GET', '/api/v1/dev/entities/organisation/globex')
    assert code == 200, employer
    # And a Claude export and generic JSONL (stored without extraction) import the same way
    code, summary, err = cli('import-conversations', str(FIXTURES / 'claude_conversations.json'), '--format', 'claude', '--wait')
    assert code == 0 and summary['conversations'] == 2 and summary['turns'] == 4 and summary['skipped'] == {'empty': 1}, err
    code, summary, err = cli('import-conversations', str(FIXTURES / 'generic.jsonl'), '--infer', 'none', '--wait')
    assert code == 0 and summary['turns'] == 4 and summary['queuedForExtraction'] == 0 and 'extraction' not in summary, err
    code, turns = gateway.request('GET', f'/api/v1/dev/sessions/{summary["sessionId"]}/turns')
    assert [t['role'] for t in turns['turns']] == ['system', 'user', 'assistant', 'user']


def test_a_long_conversation_is_sent_in_batches_within_the_limits(gateway: Gateway, cli: Cli, tmp_path: Path) -> None:
    # Given a JSONL conversation of 7 notes and a message longer than a turn may hold, When imported 3 at a time into an
    # existing session, Then every turn is stored in order and the long message became several turns
    assert gateway.request('POST', '/api/v1/dev/sessions', {'id': 'cli-notes'})[0] == 201
    lines = [{'role': 'user', 'content': f'Note {i}: the Apollo launch checklist item {i} is done.', 'ts': '2026-11-01T10:00:00Z'}
             for i in range(7)]  # fmt: skip
    lines.append({'role': 'user', 'content': ' '.join(['word'] * 30_000)})  # 150 KB
    conversation = tmp_path / 'talk.jsonl'
    conversation.write_text('\n'.join(json.dumps(line) for line in lines) + '\n', encoding='utf-8')
    code, summary, err = cli('import-conversations', str(conversation), '--batch', '3', '--session', 'cli-notes', '--infer', 'none')
    assert code == 0, err
    assert summary['sessionId'] == 'cli-notes' and summary['turns'] == 10 and '10/10 messages' in err
    code, turns = gateway.request('GET', '/api/v1/dev/sessions/cli-notes/turns')
    contents = [t['content'] for t in turns['turns']]
    assert contents[:7] == [line['content'] for line in lines[:7]]
    assert ''.join(contents[7:]) == lines[7]['content'] and all(len(c.encode()) <= 64 * 1024 for c in contents)


def test_bad_input_is_refused_before_anything_is_sent(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given files that are bad at their end, When imported, Then the CLI names the position, exits 2 and sends nothing
    sent: list[str] = []
    real_send = Client.send
    monkeypatch.setattr(Client, 'send', lambda self, method, path, *a, **k: sent.append(path) or real_send(self, method, path, *a, **k))
    bad = tmp_path / 'bad.jsonl'
    bad.write_text('{"role": "user", "content": "ok"}\n{"role": "narrator", "content": "x"}\n', encoding='utf-8')
    code, _, err = cli('import-conversations', str(bad))
    assert code == 2 and 'bad.jsonl:2' in err and 'narrator' in err
    cut = tmp_path / 'conversations.json'
    cut.write_text((FIXTURES / 'claude_conversations.json').read_text(encoding='utf-8')[:-40], encoding='utf-8')
    code, _, err = cli('import-conversations', str(cut))
    assert code == 2 and 'truncated' in err
    nothing = tmp_path / 'empty-messages.jsonl'
    nothing.write_text('{"role": "user", "content": " "}\n', encoding='utf-8')
    code, _, err = cli('import-conversations', str(nothing))
    assert code == 2 and 'no messages to import (1 empty)' in err
    code, _, err = cli('import-conversations', str(FIXTURES / 'claude_conversations.json'), '--session', 'cli-notes')
    assert code == 2 and '--session appends one conversation' in err
    code, _, err = cli('import-conversations', str(tmp_path / 'missing.json'))
    assert code == 2 and 'no such file' in err
    assert sent == []


def test_sweeps_and_exit_codes(gateway: Gateway, cli: Cli) -> None:
    code, swept, err = cli('sweep', 'expire', '--all', key=None)
    assert code == 0 and 'dev' in {r['context'] for r in swept['results']}, err
    code, swept, _ = cli('sweep', 'decay', management=None)  # the key's own context
    assert code == 0 and swept['results'][0]['context'] == 'dev' and swept['results'][0]['affected'] >= 0
    code, _, err = cli('sweep', 'decay', '--all', '--context', 'dev')
    assert code == 2 and 'not both' in err
    code, _, err = cli('contexts', 'list', management=None)
    assert code == 1 and 'management key' in err
    code, _, err = cli('contexts', 'list', env={'AGENT_MEMORY_URL': 'http://127.0.0.1:9'})
    assert code == 3 and 'cannot reach' in err
