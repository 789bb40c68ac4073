"""One built function's cold start and first requests, as Lambda would run them (smoke.py starts one per function).

Runs under python3.12 with ``-I -S -B`` (no PYTHONPATH, no site-packages, nothing written into the build): sys.path
is the function's build folder, then its layers' python/ folders, then the standard library, which is what the Lambda
runtime gives ``app`` (boto3, which the runtime adds, is needed only to send a job, and nothing here sends one).
Argument: a JSON object with ``paths``, ``events`` (sample event files), ``embeds`` (the function has the embeddings
layer) and ``mcp`` (the MCP layer). Prints one JSON line describing what it checked; a failure is an exception (exit 1).
"""

from __future__ import annotations

import importlib
import json
import math
import sys
import time
import uuid
from pathlib import Path
from typing import Any

SENTENCES = ('I moved to Berlin last spring.', 'Last spring I relocated to Berlin.', 'The invoice is overdue by two weeks.')


class Context:
    """The part of the Lambda context object the handlers and Powertools read."""

    def __init__(self, name: str) -> None:
        self.function_name = name
        self.memory_limit_in_mb = 512
        self.invoked_function_arn = f'arn:aws:lambda:us-east-1:000000000000:function:{name}'
        self.aws_request_id = uuid.uuid4().hex
        self.function_version = '$LATEST'
        self.log_group_name = f'/aws/lambda/{name}'
        self.log_stream_name = 'smoke'

    def get_remaining_time_in_millis(self) -> int:
        return 25_000


def check_embeddings() -> dict[str, Any]:
    """The configured (local) provider embeds: 384 dimensions, unit norm, a paraphrase nearer than an unrelated text."""
    from agent_memory.composition import get_services

    embedder = get_services().embedder
    vectors = embedder.embed(list(SENTENCES))
    for vector in vectors:
        assert len(vector) == 384, f'{len(vector)} dimensions, not 384'
        norm = math.sqrt(sum(x * x for x in vector))
        assert abs(norm - 1) < 1e-3, f'norm {norm}, not 1'
    close, far = (sum(a * b for a, b in zip(vectors[0], v, strict=True)) for v in vectors[1:])
    assert close > far + 0.2, f'paraphrase cosine {close:.3f}, unrelated {far:.3f}'
    return {'model': embedder.model_id, 'dimension': 384, 'paraphrase': round(close, 3), 'unrelated': round(far, 3)}


def check_mcp(app: Any, events: list[dict[str, Any]]) -> dict[str, Any]:
    """A real tools/call with a key of a fresh context (200 and a tool result), then the SDK modules a request can reach
    (mcp.server.request_state imports cryptography) load from the layers."""
    from agent_memory.composition import get_services
    from agent_memory.domain.contexts import create_context, mint_context_key

    services = get_services()
    context_id = f'smoke{uuid.uuid4().hex[:8]}'
    create_context(services.control, services.store, context_id, {})
    key = mint_context_key(services.control, context_id, 'admin', 'smoke')
    (event,) = [e for e in events if e.get('routeKey') == 'POST /mcp']
    event = {**event, 'headers': {**event['headers'], 'authorization': f'Bearer {key}'}}
    result = app.lambda_handler(event, Context('mcp'))
    assert result['statusCode'] == 200, result
    answer = json.loads(result['body'])
    assert 'result' in answer and not answer['result'].get('isError'), answer
    for module in ('mcp.server.request_state', 'mcp.server.streamable_http', 'mcp.server.lowlevel', 'mcp_types', 'cryptography'):
        importlib.import_module(module)
    return {'tools/call': answer['result'].get('structuredContent', answer['result'])}


def invoke(app: Any, name: str, event: dict[str, Any]) -> Any:
    """A sample event as its trigger delivers it: HTTP events answer below 500 (their placeholder keys get a 401)."""
    result = app.lambda_handler(event, Context(name))
    if event.get('version') == '2.0':
        status = result['statusCode']
        assert status < 500, result
        if event['routeKey'].endswith('/health'):
            assert status == 200 and json.loads(result['body']) == {'status': 'ok', 'db': 'ok'}, result
        return status
    if 'Records' in event:
        assert result == {'batchItemFailures': []}, result
        return 'no failures'
    assert isinstance(result, dict) and isinstance(result.get('results'), list), result
    return 'swept'


def main(config: dict[str, Any]) -> dict[str, Any]:
    sys.path[:0] = config['paths']
    started = time.perf_counter()
    app = importlib.import_module('app')  # the cold start: connect, migrate, sync management keys, load the model
    assert callable(app.lambda_handler)
    for name in ('anyio', 'anyio.abc'):  # bytecode.SOURCES_NEEDED: their lazy imports need their own source
        if name in sys.modules:
            assert '__getattr__' in vars(sys.modules[name]), f'{name} imported every submodule: its source is missing'
    report: dict[str, Any] = {'function': config['name'], 'init_s': round(time.perf_counter() - started, 2)}
    events = [json.loads(Path(path).read_text(encoding='utf-8')) for path in config['events']]
    report['events'] = {Path(p).name: invoke(app, config['name'], e) for p, e in zip(config['events'], events, strict=True)}
    if config['embeds']:
        report['embedding'] = check_embeddings()
    if config['mcp']:
        report['mcp'] = check_mcp(app, events)
    loaded = {n: m.__file__ for n, m in list(sys.modules.items()) if getattr(m, '__file__', None) and m.__file__ != __file__}
    outside = sorted(n for n, f in loaded.items() if not f.startswith((*config['paths'], sys.base_prefix)))
    assert not outside, f'modules loaded from outside the function and its layers: {[(n, loaded[n]) for n in outside[:5]]}'
    return report


if __name__ == '__main__':
    print('SMOKE-REPORT ' + json.dumps(main(json.loads(sys.argv[1]))))
