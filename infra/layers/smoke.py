"""`make smoke` (after `make sam-build`): every built function cold-starts and serves from its built layers alone.

The layers are trimmed (sourceless third-party bytecode, no onnxruntime C-API library: infra/layers/Makefile), so this
proves the result still runs, the way Lambda runs it: for each function of template.yaml, a python3.12 process started
with ``-I -S`` whose sys.path is only ``.aws-sam/build/<Function>`` and its layers' ``python/`` folders (smoke_function.py)

* imports ``app`` with the function's template environment (parameter defaults), so the cold start really connects to
  a database over ws:// with credentials (tests/support/ws_bridge.py: the real engine), migrates and signs in;
* feeds it its sample events from tests/events (HTTP ones answer below 500, health 200; the schedule and SQS ones run);
* with the embeddings layer, embeds sentences through the configured local provider (384-d, unit norm, a paraphrase
  nearer than an unrelated sentence); with the MCP layer, serves a real tools/call and loads mcp.server.request_state;
* and fails if any module came from anywhere but the function, its layers and the standard library.

Needs python3.12 on PATH (the Makefile adds pyenv's) and the dev venv (the bridge's embedded engine). Exits 1 on a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / 'infra')]  # tests.support.ws_bridge; local_runtime.template_routes

from local_runtime.template_routes import load_template_long_form  # noqa: E402

BUILD = ROOT / '.aws-sam' / 'build'
EVENTS = ROOT / 'tests' / 'events'
CHILD = Path(__file__).with_name('smoke_function.py')
REPORT = 'SMOKE-REPORT '
SMOKE_SECRETS = {
    'AGENT_MEMORY_SECRET_ID': '',  # no Secrets Manager here: the values below stand in for the secret's keys
    'AGENT_MEMORY_KEY_SECRET': 'smoke-key-secret',
    'AGENT_MEMORY_MANAGEMENT_KEY': 'amm_smoke-management-key',
}
PLACEHOLDERS = {'SecretArn': 'arn:aws:secretsmanager:us-east-1:000000000000:secret:smoke', 'DbUrl': 'ws://placeholder'}


def python312() -> str:
    found = shutil.which('python3.12')
    if not found:
        raise SystemExit("smoke: no python3.12 on PATH (Lambda runtime python3.12); `make smoke` adds pyenv's")
    return found


def resolve(value: Any, parameters: dict[str, Any]) -> str:
    """A template environment value: a literal, or a Ref to a parameter (its default) or to a resource (a stand-in)."""
    if isinstance(value, dict) and 'Ref' in value:
        name = value['Ref']
        if name in PLACEHOLDERS:
            return PLACEHOLDERS[name]
        if name in parameters:
            return str(parameters[name].get('Default', ''))
        return f'https://sqs.us-east-1.amazonaws.com/000000000000/smoke-{name}'  # ExtractionQueue: never sent to here
    return str(value)


def sample_events(folder: str, events: dict[str, Any]) -> list[Path]:
    """The tests/events samples that reach this function: its HTTP routes' events, and its schedule or SQS sample."""
    routes = {f'{e["Properties"]["Method"].upper()} {e["Properties"]["Path"]}' for e in events.values() if e['Type'] == 'HttpApi'}
    found = []
    for path in sorted(EVENTS.glob('*.json')):
        event = json.loads(path.read_text(encoding='utf-8'))
        if event.get('routeKey') in routes:
            found.append(path)
    kinds = {e['Type'] for e in events.values()}
    if 'ScheduleV2' in kinds:
        found.append(EVENTS / f'schedule_{folder.removeprefix("sweep_")}.json')
    if 'SQS' in kinds:
        found.append(EVENTS / f'{folder}_sqs.json')
    return found


def plans(template: dict[str, Any], db_env: dict[str, str]) -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(function, child config, child environment) for every function of the template."""
    parameters = template.get('Parameters', {})
    globals_fn = template.get('Globals', {}).get('Function', {})
    found = []
    for name, resource in template['Resources'].items():
        if resource['Type'] != 'AWS::Serverless::Function':
            continue
        props = resource['Properties']
        layers = [ref['Ref'] for ref in globals_fn.get('Layers', []) + props.get('Layers', [])]
        variables = {**globals_fn.get('Environment', {}).get('Variables', {}), **props.get('Environment', {}).get('Variables', {})}
        env = {k: resolve(v, parameters) for k, v in variables.items()}
        env.update(SMOKE_SECRETS)
        env.update(db_env)
        env.update({'PATH': os.environ.get('PATH', ''), 'AWS_REGION': 'us-east-1', 'AWS_DEFAULT_REGION': 'us-east-1',
                    'POWERTOOLS_LOG_LEVEL': 'WARNING', 'AWS_LAMBDA_FUNCTION_NAME': name})  # fmt: skip
        folder = Path(props['CodeUri']).name
        config = {
            'name': name,
            'paths': [str(BUILD / name)] + [str(BUILD / layer / 'python') for layer in layers],
            'events': [str(p) for p in sample_events(folder, props.get('Events') or {})],
            'embeds': 'EmbeddingsLayer' in layers,
            'mcp': 'McpLayer' in layers,
        }
        found.append((name, config, env))
    return found


def describe(report: dict[str, Any]) -> str:
    parts = [f'init {report["init_s"]:.1f} s', ', '.join(f'{k} {v}' for k, v in report['events'].items())]
    if 'embedding' in report:
        e = report['embedding']
        parts.append(f'embeds {e["dimension"]}-d unit vectors (paraphrase {e["paraphrase"]}, unrelated {e["unrelated"]})')
    if 'mcp' in report:
        parts.append('MCP tools/call 200, mcp.server.request_state loads')
    return '; '.join(parts)


def main() -> int:
    if not (BUILD / 'template.yaml').is_file():
        print('no .aws-sam/build/template.yaml: run `make sam-build` first', file=sys.stderr)
        return 2
    from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

    python = python312()
    template = load_template_long_form(ROOT / 'template.yaml')
    bridge = WsBridge().start()
    failed = 0
    try:
        db_env = {'AGENT_MEMORY_DB_URL': bridge.url, 'AGENT_MEMORY_DB_USER': ROOT_USER, 'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD}
        print(f'Smoke check: each built function cold-starts under {python} from its build folder and layers alone')
        for name, config, env in plans(template, db_env):
            started = time.perf_counter()
            run = subprocess.run([python, '-I', '-S', '-B', str(CHILD), json.dumps(config)], env=env, capture_output=True, text=True,
                                 timeout=600, cwd=BUILD / name)  # fmt: skip
            lines = [line[len(REPORT) :] for line in run.stdout.splitlines() if line.startswith(REPORT)]
            if run.returncode != 0 or not lines:
                failed += 1
                print(f'  {name:28} FAILED (exit {run.returncode})')
                print('\n'.join(f'      {line}' for line in (run.stderr or run.stdout).strip().splitlines()[-25:]), file=sys.stderr)
                continue
            print(f'  {name:28} ok  {time.perf_counter() - started:4.1f} s  {describe(json.loads(lines[-1]))}')
    finally:
        bridge.close()
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
