"""Cold start per Lambda function: a fresh interpreter imports ``functions/<name>/app.py`` and serves one event.

    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py                 # every function, 5 runs each
    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py --runs 3 --only health,retrieval,mcp
    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py --save before.json   # keep the numbers ...
    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py --before before.json # ... and print them side by side
    # old code beside this tree in the same run (`git archive <commit> shared functions tests/events infra/migrations`):
    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py --runs 3 --old 4f2dae3=/tmp/old-a --old f8727f5=/tmp/old-b
    # the deployment packages as `make sam-build` left them, laid out as Lambda lays them out, under python3.12:
    PYTHONPATH=shared:infra:. .venv/bin/python bench/coldstart.py --runs 5 --built

A set-up process first builds a SurrealKV database on disk (context ``dev``, an admin key, a few stored facts
with their vectors), so every first request does real work: authentication, a migrated context, rows to read.
Then, per function and run, a child interpreter (code root = the function's folder plus ``shared``, as the
Lambda layer lays it out) times from its first line: (a) the handler import, (b) import + the first request
(a representative event from ``tests/events/``), in wall time and in CPU time (the CPU figure is steadier on
a shared box). It also reports the heavy libraries the import loaded. Printed: p50 per function.

With ``--old LABEL=PATH``, each tree (this one labelled ``new``, and every old one) gets its own database prepared
by its own code, and the runs alternate tree by tree and function by function, so a burst of load on the shared
box lands on every column alike. The 1-minute load average is printed beside the numbers.

With ``--built``, the code is not this tree but the deployment packages in ``.aws-sam/build`` (run ``make sam-build``
first), under python3.12 as Lambda runs them: the function's folder, then each of its layers' ``python/`` (/opt), then a
stand-in for the runtime's own packages (boto3 and the embedded engine, built once under ``bench/.cache``). Two
layouts alternate: ``bytecode`` (the layers as built, each with compiled ``.pyc``) and ``sources only`` (the same
SharedLayer with every ``.pyc`` removed: what SAM's python builder shipped before Session 10). Lambda's /opt is
read-only, so nothing is compiled to disk between runs in either layout. Since the layers ship third-party modules as
sourceless bytecode there is no sources-only variant; ``--built --old LABEL=PATH`` runs PATH's ``.aws-sam/build``
(another checkout, built there) alongside instead.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EVENTS = ROOT / 'tests' / 'events'
KEY_SECRET = 'coldstart-key-secret'
MANAGEMENT_KEY = 'coldstart-management-key'
DEV_KEY = 'am_coldstart_dev_admin_key_0123456789'
HEAVY = (
    'openai',
    'numpy',
    'onnxruntime',
    'tokenizers',
    'mcp',
    'starlette',
    'boto3',
    'botocore',
    'aiohttp',
    'requests',
    'pydantic',
    'agent_memory.db.memory_store',
    'agent_memory.domain.extraction_pipeline',
    'agent_memory.domain.synthesis',
)

# function -> the event its first request serves (placeholders: REPLACE_WITH_DEV_KEY, the management key)
FUNCTIONS: dict[str, str] = {
    'health': 'health_get.json',
    'contexts': 'contexts_get.json',
    'keys': 'keys_list.json',
    'sessions': 'sessions_get_turns.json',
    'entities': 'entities_get_list.json',
    'views': 'profile_get.json',
    'traces': 'traces_get.json',
    'lifecycle': 'lifecycle_post_decay.json',
    'sweep_daily': 'schedule_daily.json',
    'sweep_hourly': 'schedule_hourly.json',
    'extraction_worker': 'extraction_worker_sqs.json',
    'facts': 'facts_post_text.json',
    'retrieval': 'query_post.json',
    'chat': 'chat_post.json',
    'mcp': 'mcp_post.json',
}
EMBEDDING_FUNCTIONS = {'facts', 'retrieval', 'chat', 'mcp', 'extraction_worker'}


def child_env(db_url: str, code_root: Path, tree: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(('AGENT_MEMORY_', 'POWERTOOLS_', 'PYTHON'))}
    env.update(
        {
            'PYTHONPATH': f'{code_root}{os.pathsep}{tree / "shared"}',
            'PYTHONDONTWRITEBYTECODE': '1',
            'AGENT_MEMORY_DB_URL': db_url,
            'AGENT_MEMORY_KEY_SECRET': KEY_SECRET,
            'AGENT_MEMORY_MANAGEMENT_KEY': MANAGEMENT_KEY,
            'POWERTOOLS_LOG_LEVEL': 'ERROR',
            'POWERTOOLS_METRICS_NAMESPACE': 'AgentMemoryBench',
            'POWERTOOLS_METRICS_DISABLED': 'true',
            'AWS_DEFAULT_REGION': 'us-east-1',
        }
    )
    return env


CONTEXT = """
class Context:
    function_name = 'coldstart'; memory_limit_in_mb = 1024; aws_request_id = 'coldstart'
    invoked_function_arn = 'arn:aws:lambda:us-east-1:000000000000:function:coldstart'
    def get_remaining_time_in_millis(self): return 300000
"""

SETUP = (
    CONTEXT
    + """
try:
    from agent_memory.composition import get_services
except ImportError:  # code before the composition root (4f2dae3 and older)
    from agent_memory.api.services import get_services
from agent_memory.domain.contexts import create_context, mint_context_key
services = get_services()
create_context(services.control, services.store, 'dev', {})
mint_context_key(services.control, 'dev', 'admin', 'coldstart', token=%(key)r)
services.store('dev')
import importlib.util, json
for function, name in (('sessions', 'sessions_post.json'), ('facts', 'facts_post_triples.json'),
                       ('facts', 'facts_post_text.json')):
    spec = importlib.util.spec_from_file_location(function, %(functions)r + '/' + function + '/app.py')
    app = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(app)
    with open(%(events)r + '/' + name) as f:
        event = json.loads(f.read().replace('REPLACE_WITH_DEV_KEY', %(key)r))
    result = app.lambda_handler(event, Context())
    assert result['statusCode'] < 300, result
services.db.close()
"""
)

# Runs in the child. Nothing but the standard library is imported before the clock starts.
CHILD = (
    """
import time
t0, c0 = time.perf_counter(), time.process_time()
import json, sys
import app
t1, c1 = time.perf_counter(), time.process_time()
loaded = sorted(m for m in %(heavy)r if m in sys.modules)
modules = len(sys.modules)
with open(%(event)r) as f:
    event = json.loads(f.read().replace('REPLACE_WITH_DEV_KEY', %(key)r).replace('REPLACE_WITH_MANAGEMENT_KEY', %(mkey)r))
"""
    + CONTEXT
    + """
result = app.lambda_handler(event, Context())
t2, c2 = time.perf_counter(), time.process_time()
status = result.get('statusCode') if isinstance(result, dict) else None
print(json.dumps({'import': (t1 - t0) * 1e3, 'first': (t2 - t0) * 1e3, 'import_cpu': (c1 - c0) * 1e3,
                  'first_cpu': (c2 - c0) * 1e3, 'status': status, 'loaded': loaded, 'modules': modules,
                  'modules_after': len(sys.modules),
                  'after': sorted(m for m in %(heavy)r if m in sys.modules)}))
"""
)


def python() -> str:
    return str(ROOT / '.venv' / 'bin' / 'python') if (ROOT / '.venv' / 'bin' / 'python').exists() else sys.executable


@dataclass(frozen=True)
class Layout:
    """Where one function's code comes from, and the interpreter that runs it."""

    label: str
    db_url: str
    tree: Path = ROOT  # the source tree (events, and the code when ``paths`` is empty)
    interpreter: str = ''
    paths: dict[str, list[Path]] = field(default_factory=dict)  # function -> sys.path entries (a built package)

    def code_root(self, name: str) -> Path:
        return self.paths[name][0] if self.paths else self.tree / 'functions' / name

    def env(self, name: str) -> dict[str, str]:
        env = child_env(self.db_url, self.code_root(name), self.tree)
        if self.paths:
            env['PYTHONPATH'] = os.pathsep.join(str(p) for p in self.paths[name])
        return env


BUILD = ROOT / '.aws-sam' / 'build'
RUNTIME_STANDIN = ROOT / 'bench' / '.cache' / 'lambda-runtime-py312'


def python312() -> str:
    pyenv = sorted(Path(os.path.expanduser('~/.pyenv/versions')).glob('3.12.*/bin/python3.12'))
    found = pyenv[-1] if pyenv else shutil.which('python3.12')  # a pyenv shim on PATH may name a version not selected
    if not found:
        raise SystemExit('--built needs a python3.12 (the Lambda runtime) on PATH or under ~/.pyenv')
    return str(found)


def runtime_standin(interpreter: str) -> Path:
    """The packages Lambda's python3.12 runtime brings (boto3, compiled) plus the embedded engine the bench's database
    needs (in AWS the functions talk to a hosted server over ws instead)."""
    if not (RUNTIME_STANDIN / '.ready').exists():
        pins = [line.strip() for line in (ROOT / 'requirements-dev.txt').read_text().splitlines() if line.startswith('boto3==')]
        subprocess.run([interpreter, '-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target',
                        str(RUNTIME_STANDIN), *pins], check=True)  # fmt: skip
        engine = Path(python()).parents[1].glob('lib/python3.*/site-packages/surrealdb_embedded')
        shutil.copytree(next(engine), RUNTIME_STANDIN / 'surrealdb_embedded', dirs_exist_ok=True)
        subprocess.run([interpreter, '-m', 'compileall', '-q', str(RUNTIME_STANDIN)], check=True, stdout=subprocess.DEVNULL)
        (RUNTIME_STANDIN / '.ready').touch()
    return RUNTIME_STANDIN


def built_layouts(tmp: str, others: dict[str, Path] | None = None) -> list[Layout]:
    """The build as it is (``bytecode``) and either other trees' builds (``--old LABEL=PATH`` with ``--built``: PATH's
    ``.aws-sam/build``) or ``sources only`` (its SharedLayer without .pyc), Lambda's path order. A SharedLayer whose
    third-party modules are sourceless (infra/layers/bytecode.py) has no sources-only variant: compare with an older
    build instead."""
    sys.path.insert(0, str(ROOT / 'infra'))
    from local_runtime.template_routes import load_template_long_form

    if not (BUILD / 'template.yaml').is_file():
        raise SystemExit('no .aws-sam/build/template.yaml: run `make sam-build` first')
    interpreter = python312()
    runtime = runtime_standin(interpreter)
    builds: list[tuple[str, Path, Path]] = [(label, tree / '.aws-sam' / 'build', tree / '.aws-sam' / 'build' / 'SharedLayer')
                                            for label, tree in (others or {}).items()]  # fmt: skip
    builds.append(('bytecode', BUILD, BUILD / 'SharedLayer'))
    sourceless = any((BUILD / 'SharedLayer' / 'python').glob('*/__init__.pyc'))
    if not others and not sourceless:
        sources_only = Path(tmp) / 'SharedLayer-sources-only'
        shutil.copytree(BUILD / 'SharedLayer', sources_only, ignore=shutil.ignore_patterns('__pycache__', '*.pyc'))
        builds.append(('sources only', BUILD, sources_only))
    layouts = []
    for label, build, shared in builds:
        if not (build / 'template.yaml').is_file():
            raise SystemExit(f'no {build}/template.yaml: run `make sam-build` in that tree first')
        template = load_template_long_form(build / 'template.yaml')
        globals_layers = [ref['Ref'] for ref in template['Globals']['Function']['Layers']]
        paths: dict[str, list[Path]] = {}
        for name in FUNCTIONS:
            logical_id = ''.join(part.title() for part in name.split('_')) + 'Function'
            layers = globals_layers + [ref['Ref'] for ref in template['Resources'][logical_id]['Properties'].get('Layers', [])]
            dirs = [shared if layer == 'SharedLayer' else build / layer for layer in layers]
            paths[name] = [build / logical_id, *(d / 'python' for d in dirs), runtime]
        layouts.append(Layout(label, f'surrealkv://{tmp}/{label.replace(" ", "-")}', interpreter=interpreter, paths=paths))
    return layouts


def prepare(db_url: str, tree: Path = ROOT) -> None:
    code = SETUP % {'key': DEV_KEY, 'events': str(tree / 'tests' / 'events'), 'functions': str(tree / 'functions')}
    code_root = tree / 'functions' / 'facts'
    subprocess.run([python(), '-c', code], env=child_env(db_url, code_root, tree), check=True, cwd=code_root)


def one_run(layout: Layout, name: str) -> dict[str, Any]:
    code_root = layout.code_root(name)
    event = layout.tree / 'tests' / 'events' / FUNCTIONS[name]
    code = CHILD % {'heavy': HEAVY, 'event': str(event), 'key': DEV_KEY, 'mkey': MANAGEMENT_KEY}
    interpreter = layout.interpreter or python()
    done = subprocess.run([interpreter, '-c', code], env=layout.env(name), cwd=code_root, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise RuntimeError(f'{name}: exit {done.returncode}\n{done.stderr[-2000:]}')
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(layouts: list[Layout], names: list[str], runs: int) -> dict[str, dict[str, dict[str, Any]]]:
    """p50 per layout and function (each layout's database prepared)."""
    samples: dict[str, dict[str, list[dict[str, Any]]]] = {layout.label: {name: [] for name in names} for layout in layouts}
    loads: list[float] = []
    for _ in range(runs):  # interleaved: a burst of load on the shared box spreads over every function and layout
        for name in names:
            for layout in layouts:
                samples[layout.label][name].append(one_run(layout, name))
                loads.append(os.getloadavg()[0])
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for label, by_name in samples.items():
        out[label] = {}
        for name, rows in by_name.items():
            row = {key: statistics.median(r[key] for r in rows) for key in ('import', 'first', 'import_cpu', 'first_cpu')}
            row.update(status=rows[-1]['status'], loaded=rows[-1]['loaded'], after=rows[-1]['after'])
            row.update(modules=rows[-1]['modules'], modules_after=rows[-1]['modules_after'])
            out[label][name] = row
            print(f'  {label} {name}: import {row["import"]:.0f} ms, first request {row["first"]:.0f} ms', file=sys.stderr)
    print(f'\n1-minute load average during the runs: min {min(loads):.1f}, median {statistics.median(loads):.1f}, '
          f'max {max(loads):.1f} (2 vCPUs)')  # fmt: skip
    return out


def goal(name: str) -> int:
    return 600 if name in EMBEDDING_FUNCTIONS else 250


def side_by_side(runs: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Every tree of one run in columns: import and import + first request, wall (CPU) ms, p50."""
    labels = list(runs)
    names = list(runs[labels[0]])
    print('\n## Cold start per function, trees side by side in one run (fresh interpreter, p50; wall ms, CPU ms in brackets)\n')
    print('| function | ' + ' | '.join(f'import {label}' for label in labels) + ' | '
          + ' | '.join(f'import + first request {label}' for label in labels) + ' | goal |')  # fmt: skip
    print('|---|' + '---|' * (2 * len(labels) + 1))
    for name in names:
        imports = [f'{runs[label][name]["import"]:.0f} ({runs[label][name]["import_cpu"]:.0f})' for label in labels]
        firsts = [f'{runs[label][name]["first"]:.0f} ({runs[label][name]["first_cpu"]:.0f})' for label in labels]
        print(f'| {name} | {" | ".join(imports)} | {" | ".join(firsts)} | ≤ {goal(name)} |')
    print('\n| function | ' + ' | '.join(f'modules in `sys.modules` after the import / the first request, {label}' for label in labels)
          + ' |')  # fmt: skip
    print('|---|' + '---|' * len(labels))
    for name in names:
        counts = [f'{runs[label][name]["modules"]} / {runs[label][name]["modules_after"]}' for label in labels]
        print(f'| {name} | {" | ".join(counts)} |')
    print('\n| function | ' + ' | '.join(f'watched modules after the import, {label}' for label in labels) + ' |')
    print('|---|' + '---|' * len(labels))
    for name in names:
        print(f'| {name} | ' + ' | '.join(', '.join(runs[label][name]['loaded']) or '–' for label in labels) + ' |')


def report(now: dict[str, dict[str, Any]], before: dict[str, dict[str, Any]] | None) -> None:
    def cell(data: dict[str, dict[str, Any]] | None, name: str, key: str) -> str:
        return f'{data[name][key]:.0f}' if data and name in data else '–'

    print('\n## Cold start per function (fresh interpreter, p50; ms; CPU ms in brackets)\n')
    print('| function | status | import before | import after | import + first request before | import + first request after | goal |')
    print('|---|---|---|---|---|---|---|')
    for name, row in now.items():
        imports = [f'{cell(data, name, "import")} ({cell(data, name, "import_cpu")})' for data in (before, now)]
        firsts = [f'{cell(data, name, "first")} ({cell(data, name, "first_cpu")})' for data in (before, now)]
        print(f'| {name} | {row["status"]} | {" | ".join(imports)} | {" | ".join(firsts)} | ≤ {goal(name)} |')
    print('\n| function | heavy modules after the import, before | after |')
    print('|---|---|---|')
    for name, row in now.items():
        print(f'| {name} | {", ".join(before[name]["loaded"]) if before and name in before else "–"} | {", ".join(row["loaded"]) or "–"} |')


def floors(runs: int) -> None:
    """What a fresh interpreter pays for the libraries every function needs, alone."""
    probes = {
        'python -c pass': 'pass',
        'import surrealdb': 'import surrealdb',
        'import surrealdb_embedded (the engine)': 'import surrealdb_embedded',
        'import aws_lambda_powertools.event_handler': 'import aws_lambda_powertools.event_handler',
        'import pydantic': 'import pydantic',
        'import boto3; boto3.client("sqs")': 'import boto3; boto3.client("sqs", region_name="us-east-1")',
        'import numpy, onnxruntime, tokenizers': 'import numpy, onnxruntime, tokenizers',
        'import mcp.server.lowlevel': 'import mcp.server.lowlevel',
        'agent_memory.db.sdk (the SDK without its HTTP transports)': 'import agent_memory.db.sdk',
        'agent_memory.mcp_server.sdk (the MCP server parts only)': 'import agent_memory.mcp_server.sdk',
        'import mcp_types (the protocol models, needed)': 'import mcp_types',
        'plain-handler floor: Powertools resolver + logger + metrics, pydantic, db.sdk': (
            'import aws_lambda_powertools.event_handler.api_gateway, aws_lambda_powertools.logging, '
            'aws_lambda_powertools.metrics, pydantic, agent_memory.db.sdk'
        ),
        'health floor: Powertools resolver + logger + metrics, db.sdk, an embedded database opened and pinged': (
            'import aws_lambda_powertools.event_handler, aws_lambda_powertools.logging, aws_lambda_powertools.metrics\n'
            'from agent_memory.db.sdk import connect\nconnect("mem://").query_raw("RETURN 1;")'
        ),
        'first-vector floor: the local model built and one text embedded (numpy, onnxruntime, tokenizers)': (
            'from agent_memory.embeddings.local import LocalMiniLM\nLocalMiniLM().embed(["where does Ada live"])'
        ),
    }
    env = {**os.environ, 'PYTHONPATH': str(ROOT / 'shared')}
    print('\n## Floors: one library alone in a fresh interpreter (p50 of the whole process: wall ms, CPU ms)\n')
    print('| probe | wall ms | CPU ms | load (1 min) |')
    print('|---|---|---|---|')
    for label, code in probes.items():
        walls, cpus = [], []
        for _ in range(runs):
            t0 = time.perf_counter()
            probe = f'{code}\nimport time; print(time.process_time() * 1e3)'
            done = subprocess.run([python(), '-c', probe], env=env, check=True, capture_output=True, text=True)
            walls.append((time.perf_counter() - t0) * 1e3)
            cpus.append(float(done.stdout.split()[-1]))
        print(f'| `{label}` | {statistics.median(walls):.0f} | {statistics.median(cpus):.0f} | {os.getloadavg()[0]:.1f} |')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--only', help='comma-separated function names')
    parser.add_argument('--save', type=Path, help='write the p50s as JSON (to compare a later run with)')
    parser.add_argument('--before', type=Path, help='a JSON file written by --save, printed side by side')
    parser.add_argument('--load', type=Path, help='print a run saved with --save instead of measuring')
    parser.add_argument('--old', action='append', default=[], metavar='LABEL=PATH',
                        help='another code tree (shared, functions, tests/events, infra/migrations) run alongside')  # fmt: skip
    parser.add_argument('--built', action='store_true', help='the sam build output under python3.12, with and without bytecode')
    parser.add_argument('--skip-floors', action='store_true')
    args = parser.parse_args()
    names = args.only.split(',') if args.only else list(FUNCTIONS)
    unknown = set(names) - set(FUNCTIONS)
    if unknown:
        parser.error(f'unknown functions: {sorted(unknown)}')
    olds = dict(item.split('=', 1) for item in args.old)
    if args.load:
        now = json.loads(args.load.read_text())
    else:
        with tempfile.TemporaryDirectory(prefix='coldstart-') as tmp:
            trees = {**{k: Path(v).resolve() for k, v in olds.items()}, 'new': ROOT}
            sources = [Layout(label, f'surrealkv://{tmp}/{label}', tree) for label, tree in trees.items()]
            layouts = built_layouts(tmp, {k: Path(v).resolve() for k, v in olds.items()}) if args.built else sources
            for layout in layouts:
                print(f'preparing the database of {layout.label}', file=sys.stderr)
                prepare(layout.db_url, layout.tree)
            runs = measure(layouts, names, args.runs)
        if olds or args.built:
            side_by_side(runs)
        now = runs[layouts[-1].label]
    if args.save:
        args.save.write_text(json.dumps(now, indent=1))
    if not olds and not args.built:
        report(now, json.loads(args.before.read_text()) if args.before else None)
    if not args.skip_floors:
        floors(args.runs)


if __name__ == '__main__':
    main()
