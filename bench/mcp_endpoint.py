"""MCP endpoint: what the Streamable-HTTP layer costs on top of the REST route doing the same work.

Measured side by side in one run, in-process through the Lambda handlers on API Gateway v2 events (embedded
SurrealDB, local MiniLM embeddings), over one context seeded with 500 facts:

* ``POST /query`` (retrieval function) against MCP ``tools/call recall`` (mcp function), same question;
* ``POST /context`` against MCP ``tools/call context``;
* MCP ``ping`` and ``tools/list``: the per-request price of the SDK transport alone (a fresh stateless session
  manager and event loop per invocation, JSON-RPC parsing, the response), with auth and no domain work;
* cold import of each handler module in a fresh interpreter (the Lambda init phase, minus the model load).

Run: ``make bench-mcp`` (or ``PYTHONPATH=shared:infra:. .venv/bin/python bench/mcp_endpoint.py``). Nothing asserts on timings.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
from bench_env import ROOT, load_handler  # noqa: I001  # first: paths and environment before the service imports

from agent_memory.composition import get_services  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from local_runtime.events import LocalContext, http_event  # noqa: E402

QUESTION = 'What is the plan of person 17?'
ACCEPT = 'application/json, text/event-stream'


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float('nan')


def seed(fn_facts: Any, ctx: str, key: str, n: int) -> None:
    for start in range(0, n, 100):
        triples = [{'entity': {'type': 'person', 'name': f'Person {i}'}, 'key': 'plan', 'value': f'Plan {i % 7}'}
                   for i in range(start, min(start + 100, n))]  # fmt: skip
        event = http_event('POST', f'/api/v1/{ctx}/facts', body={'infer': 'triples', 'triples': triples},
                           headers={'authorization': f'Bearer {key}'}, path_parameters={'context_id': ctx})  # fmt: skip
        assert fn_facts.lambda_handler(event, LocalContext())['statusCode'] == 200


def timed(fn: Any, event_for: Any, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        event = event_for()
        started = time.perf_counter()
        result = fn.lambda_handler(event, LocalContext())
        samples.append((time.perf_counter() - started) * 1000)
        assert result['statusCode'] == 200, result
    return samples


def rest(ctx: str, key: str, route: str) -> Any:
    return lambda: http_event('POST', f'/api/v1/{ctx}/{route}', body={'query': QUESTION, 'k': 10},
                              headers={'authorization': f'Bearer {key}'}, path_parameters={'context_id': ctx})  # fmt: skip


def mcp(key: str, method: str, params: dict[str, Any] | None = None) -> Any:
    body = json.dumps({'jsonrpc': '2.0', 'id': 1, 'method': method, **({'params': params} if params else {})})
    return lambda: http_event(
        'POST', '/mcp', route_key='POST /mcp', body=body, headers={'authorization': f'Bearer {key}', 'accept': ACCEPT}
    )


def cold_import(module_path: str) -> float:
    code = (
        'import sys, time, importlib.util; t = time.perf_counter(); '
        f'spec = importlib.util.spec_from_file_location("m", {module_path!r}); '
        'm = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); '
        'print((time.perf_counter() - t) * 1000)'
    )
    env = {**os.environ, 'PYTHONPATH': f'{ROOT / "shared"}:{ROOT / "infra"}', 'AGENT_MEMORY_EMBEDDING_PROVIDER': 'openai',
           'AGENT_MEMORY_EMBEDDING_BASE_URL': 'http://127.0.0.1:9', 'AGENT_MEMORY_EMBEDDING_MODEL': 'unused'}  # fmt: skip
    out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--runs', type=int, default=200)
    parser.add_argument('--facts', type=int, default=500)
    parser.add_argument('--warm-up', type=int, default=10, help='calls of each kind before the timed ones')
    parser.add_argument('--cold-imports', type=int, default=3, help='fresh interpreters per handler module (0: skip that table)')
    args = parser.parse_args()
    services = get_services()
    ctx = 'benchmcp'
    create_context(services.control, services.store, ctx, {'rate_limit': {'enabled': False}})
    key = mint_context_key(services.control, ctx, 'admin', 'bench')
    print(f'seeding {args.facts} facts…', file=sys.stderr)
    seed(load_handler('facts'), ctx, key, args.facts)
    retrieval, server = load_handler('retrieval'), load_handler('mcp')
    recall = mcp(key, 'tools/call', {'name': 'recall', 'arguments': {'query': QUESTION, 'k': 10}})
    context = mcp(key, 'tools/call', {'name': 'context', 'arguments': {'query': QUESTION, 'k': 10}})
    pairs = (
        (('REST POST /query', retrieval, rest(ctx, key, 'query')), ('MCP tools/call recall', server, recall)),
        (('REST POST /context', retrieval, rest(ctx, key, 'context')), ('MCP tools/call context', server, context)),
        (('MCP ping (transport only)', server, mcp(key, 'ping')), ('MCP tools/list', server, mcp(key, 'tools/list'))),
    )
    rows: list[tuple[str, list[float]]] = []
    for first, second in pairs:  # interleaved, so both sides see the same data (traces and importance grow as it runs)
        print(f'{first[0]} / {second[0]}: {args.runs} calls each…', file=sys.stderr)
        by_call: dict[str, list[float]] = {first[0]: [], second[0]: []}
        for i in range(args.runs + args.warm_up):
            for label, fn, event_for in (first, second):
                sample = timed(fn, event_for, 1)
                if i >= args.warm_up:  # the first calls of each are warm-up
                    by_call[label] += sample
        rows += list(by_call.items())
    print(f'\nPer-call latency, {args.runs} calls each, {args.facts} facts (ms):')
    print(f'  {"call":<30} {"p50":>8} {"p95":>8} {"mean":>8}')
    for label, samples in rows:
        print(f'  {label:<30} {pct(samples, 50):>8.2f} {pct(samples, 95):>8.2f} {sum(samples) / len(samples):>8.2f}')
    if not args.cold_imports:
        return
    print('\nCold import of the handler module in a fresh interpreter (ms, model load excluded):')
    for name in ('retrieval', 'mcp'):
        imports = [cold_import(str(ROOT / 'functions' / name / 'app.py')) for _ in range(args.cold_imports)]
        print(f'  functions/{name + "/app.py":<22} min {min(imports):>8.1f}  max {max(imports):>8.1f}')


if __name__ == '__main__':
    main()
