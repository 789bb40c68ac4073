"""What a cold start imports: each handler module, in a fresh interpreter laid out as Lambda lays it out (the
function's folder plus the shared layer), must not load libraries its first request does not need. No timing:
the check is which modules are in ``sys.modules`` (``bench/coldstart.py`` has the milliseconds)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EMBEDDING = {'chat', 'retrieval', 'mcp', 'extraction_worker'}  # their first request embeds: the model loads in the init phase
PLAIN = sorted(p.name for p in (ROOT / 'functions').iterdir() if (p / 'app.py').exists() and p.name not in EMBEDDING)
# the LLM client; the SDK's HTTP transports; SQS before a send; the response models (~40 ms CPU, only the OpenAPI generator uses them)
NEVER = ('openai', 'aiohttp', 'requests', 'boto3', 'agent_memory.api.responses')
NOT_IN_PLAIN = ('numpy', 'onnxruntime', 'tokenizers', 'mcp', 'mcp_types', 'starlette')
MCP_UNUSED = ('mcp.client', 'mcp.server.mcpserver', 'cryptography')
# what only ingesting or composing requests use: the extraction pipeline, the LLM stage, the composer
INGEST_AND_SYNTHESIS = ('agent_memory.domain.extraction_pipeline', 'agent_memory.extraction.llm', 'agent_memory.domain.synthesis')
EXTRACTION_STACK = (*INGEST_AND_SYNTHESIS, 'agent_memory.domain.retrieval')  # and recall's ranking
USES_EXTRACTION = {'facts'}  # ingest
# what a health check needs none of: authentication, the row converters, a context's stores, the request models, pydantic
NOT_IN_HEALTH = (
    'agent_memory.domain.auth',
    'agent_memory.db.to_rows',
    'agent_memory.db.memory_store',
    'agent_memory.db.context_stores',
    'agent_memory.models',
    'pydantic',
)
SERVE = """
import json
class Context:
    function_name = 'cold-start'; memory_limit_in_mb = 1024; aws_request_id = 'cold-start'
    invoked_function_arn = 'arn:aws:lambda:us-east-1:000000000000:function:cold-start'
    def get_remaining_time_in_millis(self): return 300000
def serve(name, key=''):
    with open({events!r} + '/' + name) as f:
        event = json.loads(f.read().replace('REPLACE_WITH_DEV_KEY', key))
    status = app.lambda_handler(event, Context())['statusCode']
    assert status == 200, status
""".format(events=str(ROOT / 'tests' / 'events'))


def loaded_after(code: str, watched: tuple[str, ...], code_root: Path = ROOT / 'shared', **env: str) -> list[str]:
    """Run ``code`` in a fresh interpreter; return which of ``watched`` ended up in ``sys.modules``."""
    script = f'{code}\nimport json, sys\nprint(json.dumps([m for m in {watched!r} if m in sys.modules]))'
    environ = {k: v for k, v in os.environ.items() if not k.startswith(('AGENT_MEMORY_', 'PYTHON'))}
    environ.update(
        PYTHONPATH=os.pathsep.join([str(code_root), str(ROOT / 'shared')]),
        AGENT_MEMORY_DB_URL='mem://',
        AGENT_MEMORY_KEY_SECRET='cold-start-test',
        POWERTOOLS_METRICS_DISABLED='true',
    )
    environ.update(env)
    done = subprocess.run([sys.executable, '-c', script], env=environ, cwd=code_root, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


@pytest.mark.parametrize('function', PLAIN)
def test_plain_handler_import_loads_no_model_llm_mcp_or_http_transport(function: str) -> None:
    # Given a plain handler, When it is imported in a fresh interpreter, Then no model, LLM client, MCP SDK or HTTP
    # transport is loaded
    assert loaded_after('import app', NEVER + NOT_IN_PLAIN, ROOT / 'functions' / function) == []


@pytest.mark.parametrize('function', sorted(EMBEDDING))
def test_embedding_handler_import_loads_the_model_but_no_llm_client_or_http_transport(function: str) -> None:
    # Given a handler that embeds, When it is imported fresh, Then only numpy and onnxruntime of the watched modules
    # load
    watched = NEVER + ('numpy', 'onnxruntime') + (() if function == 'mcp' else ('mcp', 'mcp_types'))
    assert loaded_after('import app', watched, ROOT / 'functions' / function) == ['numpy', 'onnxruntime']


def test_mcp_handler_import_skips_the_sdk_client_and_high_level_server() -> None:
    # Given the MCP handler, When it is imported fresh, Then the SDK's client and high-level server are not loaded
    assert loaded_after('import app', MCP_UNUSED, ROOT / 'functions' / 'mcp') == []


@pytest.mark.parametrize('function', sorted(set(PLAIN) - USES_EXTRACTION))
def test_plain_handler_import_loads_no_extraction_retrieval_synthesis_or_context_stores(function: str) -> None:
    # Given a plain handler, When it is imported fresh, Then neither the extraction stack nor a context's stores load
    watched = EXTRACTION_STACK + ('agent_memory.db.context_stores',)
    assert loaded_after('import app', watched, ROOT / 'functions' / function) == []


def test_the_recall_handler_import_loads_no_ingest_or_synthesis() -> None:
    # Given the retrieval handler (its first request is usually /query), When it is imported fresh, Then /reflect's
    # ingest pipeline and LLM composer are not loaded
    assert loaded_after('import app', INGEST_AND_SYNTHESIS, ROOT / 'functions' / 'retrieval') == []


def test_health_check_loads_no_authentication_stores_or_models_through_its_first_request() -> None:
    # Given the health handler, When it is imported fresh and serves GET /health, Then authentication, a context's
    # stores, the request models, pydantic and the extraction stack are still not loaded
    code = f'import app\n{SERVE}\nserve("health_get.json")'
    assert loaded_after(code, NOT_IN_HEALTH + EXTRACTION_STACK, ROOT / 'functions' / 'health') == []


def test_a_configured_llm_is_not_imported_or_built_by_a_health_check() -> None:
    # Given an LLM endpoint and extraction model configured, When the health handler is imported fresh and serves
    # GET /health, Then the openai client is neither imported nor built (only extracting and composing paths need it)
    env = {'AGENT_MEMORY_LLM_BASE_URL': 'http://127.0.0.1:9/v1', 'AGENT_MEMORY_LLM_EXTRACTION_MODEL': 'cold-start-model'}
    code = f'import app\n{SERVE}\nserve("health_get.json")'
    assert loaded_after(code, ('openai',), ROOT / 'functions' / 'health', **env) == []


def test_an_entity_read_loads_no_extraction_retrieval_or_synthesis_through_its_first_request() -> None:
    # Given a context with a key, When the entities handler is imported fresh and serves GET /entities, Then the
    # extraction stack, retrieval and synthesis are still not loaded
    code = (
        'from agent_memory.composition import get_services\n'
        'from agent_memory.domain.contexts import create_context, mint_context_key\n'
        'services = get_services()\n'
        "create_context(services.control, services.store, 'dev', {})\n"
        "key = mint_context_key(services.control, 'dev', 'admin', 'cold-start')\n"
        f'import app\n{SERVE}\nserve("entities_get_list.json", key)'
    )
    assert loaded_after(code, EXTRACTION_STACK, ROOT / 'functions' / 'entities') == []


# the stores a context is handed, and the write path (a plan's emitters and typed operations)
STORES = (
    'agent_memory.db.memory_store',
    'agent_memory.db.inspection_reads',
    'agent_memory.db.turn_store',
    'agent_memory.db.trace_store',
    'agent_memory.db.trace_reads',
    'agent_memory.db.lifecycle_store',
)
WRITE_PATH = ('agent_memory.db.write_emitters', 'agent_memory.write_ops')


def test_first_reads_import_only_the_stores_they_use_and_never_the_write_path(tmp_path: Path) -> None:
    # Given a context with a key in a database on disk (made by another interpreter, so its imports do not count)
    url = f'surrealkv://{tmp_path / "db"}'
    setup = (
        'from agent_memory.composition import get_services\n'
        'from agent_memory.domain.contexts import create_context, mint_context_key\n'
        'services = get_services()\n'
        "create_context(services.control, services.store, 'dev', {})\n"
        "print(mint_context_key(services.control, 'dev', 'admin', 'cold-start'))\n"
        'services.db.close()\n'
    )
    environ = {k: v for k, v in os.environ.items() if not k.startswith(('AGENT_MEMORY_', 'PYTHON'))}
    environ.update(PYTHONPATH=str(ROOT / 'shared'), AGENT_MEMORY_DB_URL=url, AGENT_MEMORY_KEY_SECRET='cold-start-test')
    done = subprocess.run([sys.executable, '-c', setup], env=environ, capture_output=True, text=True, timeout=300, check=True)
    key = done.stdout.strip().splitlines()[-1]
    # When the self-service keys handler serves its first request fresh, Then no store of the context is imported
    code = f'import app\n{SERVE}\nserve("keys_list.json", {key!r})'
    assert loaded_after(code, STORES + WRITE_PATH, ROOT / 'functions' / 'keys', AGENT_MEMORY_DB_URL=url) == []
    # When the entities handler serves GET /entities fresh, Then it imports the reads it uses, not the write path
    code = f'import app\n{SERVE}\nserve("entities_get_list.json", {key!r})'
    loaded = loaded_after(code, STORES + WRITE_PATH, ROOT / 'functions' / 'entities', AGENT_MEMORY_DB_URL=url)
    assert loaded == ['agent_memory.db.memory_store', 'agent_memory.db.inspection_reads']


def test_a_configured_queue_does_not_import_boto3_until_a_job_is_sent() -> None:
    # Given a queue URL configured, When the services start and then the queue client is touched, Then boto3 loads only
    # at that touch
    queue_url = 'https://sqs.us-east-1.amazonaws.com/000000000000/cold-start-test'
    code = 'import app\nfrom agent_memory.composition import get_services\nget_services().db.ping()'
    env = {'AGENT_MEMORY_QUEUE_URL': queue_url, 'AWS_DEFAULT_REGION': 'us-east-1'}
    assert loaded_after(code, ('boto3',), ROOT / 'functions' / 'health', **env) == []
    touched = code + '\nget_services().queue.client'
    assert loaded_after(touched, ('boto3',), ROOT / 'functions' / 'health', **env) == ['boto3']


def test_deferred_sdk_package_resolves_every_name_to_the_real_objects() -> None:
    """After the deferred import, ``from surrealdb import X`` elsewhere still works and names the same class."""
    # Given the SurrealDB SDK's deferred package init, When names are imported from it, Then they are the real objects
    # and the full init runs on demand
    code = (
        'from agent_memory.db.sdk import RecordID, connect\n'
        'import sys\n'
        'from surrealdb import streaming\n'  # a submodule not imported yet, by from-import: no package __init__
        'assert "aiohttp" not in sys.modules\n'
        'from surrealdb import RecordID as Public, Surreal\n'
        'assert Public is RecordID\n'
        'db = connect("mem://")\n'
        'assert db.query_raw("RETURN 1;")["result"][0]["result"] == 1\n'
        'assert type(db).__name__ == type(Surreal("mem://")).__name__\n'
    )
    assert loaded_after(code, ('aiohttp',)) == ['aiohttp']  # the full package __init__ ran on demand


def test_request_models_build_their_schemas_only_when_a_request_validates_one() -> None:
    # Given the health handler, When it is imported and served, Then no request model builds its schema (numpy stays
    # unloaded)
    code = (
        'import app\n'
        'from agent_memory import models\n'
        'from agent_memory.composition import get_services\n'
        'get_services().db.ping()\n'
        'built = [n for n, c in vars(models).items() if isinstance(c, type) and issubclass(c, models.StrictModel)'
        ' and c.__pydantic_complete__]\n'
        'assert built == [], built\n'
        'models.QueryRequest.model_validate({"query": "where does Ada live"})\n'
        'assert models.QueryRequest.__pydantic_complete__\n'
    )
    assert loaded_after(code, ('numpy',), ROOT / 'functions' / 'health') == []
