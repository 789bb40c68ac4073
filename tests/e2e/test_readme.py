"""The README's first ten minutes, executed as written: the walk-through's shell commands in order against the local
gateway, then the published-client and MCP snippets. A README that stops working fails here."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.gateway import ROOT, running_gateway

README = ROOT / 'README.md'


def block(name: str) -> str:
    """The fenced block right after ``<!-- readme-test: name -->``."""
    m = re.search(rf'<!-- readme-test: {name} -->\n```\w+\n(?P<code>.*?)\n```', README.read_text(), re.S)
    assert m, f'README has no block marked {name!r}'
    return m.group('code')


def _json_lines(output: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in output.splitlines() if line.startswith('{')]


def test_the_readme_runs_as_written(tmp_path: Path) -> None:
    data_dir = tmp_path / 'data'
    with running_gateway(data_dir) as gateway:
        port = gateway.base.rsplit(':', 1)[1]
        # Every curl fails the script on an HTTP error and ends its answer with a newline (one JSON document a line)
        script = '\n'.join([
            'set -euo pipefail',
            'curl() { command curl --fail-with-body "$@"; echo; }',
            block('walkthrough'),
            block('env'),
            f"{sys.executable} - <<'PY'\n{block('python-client')}\nPY",
            f"{sys.executable} - <<'PY'\n{block('mcp')}\nPY",
        ])  # fmt: skip
        env = {**os.environ, 'PORT': port, 'AGENT_MEMORY_DATA_DIR': str(data_dir)}
        env.pop('AGENT_MEMORY_URL', None)
        env.pop('AGENT_MEMORY_KEY', None)
        run = subprocess.run(['bash', '-c', script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    answers = _json_lines(run.stdout)
    profile = next(a for a in answers if 'selfFacts' in a)
    self_facts = {(f['key'], f['value']) for f in profile['selfFacts']}  # type: ignore[union-attr]
    # The user's own facts, the correction applied ("Actually I moved to Porto"), instructions kept
    assert {('name', 'Sam Rivera'), ('employer', 'Acme'), ('location', 'Porto')} <= self_facts, profile
    assert ('location', 'Lisbon') not in self_facts, profile
    assert [i['description'] for i in profile['instructions']] == ['Always answer in bullet points'], profile  # type: ignore[union-attr]
    history = next(a for a in answers if 'history' in a)
    assert [h['value'] for h in history['history']] == ['Pro', 'Free'], history  # type: ignore[union-attr]
    replies = [a for a in answers if 'reply' in a]
    assert [r['cached'] for r in replies] == [False, True, False], replies
    assert 'Pro' in str(replies[0]['reply']) and replies[0]['citations'], replies
    assert str(replies[2]['reply']).startswith("I don't know"), replies
    assert any('secret' in a and a.get('principalId') == 'admin' for a in answers), answers
    # The client snippet prints Ada's plan as changed by its own triple; the MCP snippet what it just remembered
    printed = [line for line in run.stdout.splitlines() if not line.startswith('{') and line.strip()]
    assert any('Team' in line for line in printed), run.stdout
    assert any('oat milk' in line for line in printed), run.stdout
