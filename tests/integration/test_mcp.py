"""The MCP endpoint (CONTRACT §11) through its Lambda handler: JSON-RPC in API Gateway v2 events, embedded SurrealDB.

The SDK's own client over real HTTP is in tests/e2e/test_mcp_client.py; these tests pin the wire shapes, every
tool's effect on the data, and the error model (isError results versus JSON-RPC -32602/-32601, HTTP 401).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.synthesis import LlmComposer
from tests.support.chat import QUESTION
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.mcp_rpc import rpc, rpc_raw
from tests.support.principals import make_principal
from tests.support.worker import Worker


def call(api: Api, tool: str, **arguments: Any) -> dict[str, Any]:
    """A tools/call that must succeed at the protocol level; returns the CallToolResult."""
    answer = rpc(api.key, 'tools/call', {'name': tool, 'arguments': arguments})
    assert 'result' in answer, answer
    result: dict[str, Any] = answer['result']
    return result


def ok(api: Api, tool: str, **arguments: Any) -> dict[str, Any]:
    result = call(api, tool, **arguments)
    assert result['isError'] is False, result
    assert json.loads(result['content'][0]['text']) == result['structuredContent'] or tool == 'context'
    structured: dict[str, Any] = result['structuredContent']
    return structured


# ---------------------------------------------------------------- listing


def test_tools_list_names_the_six_tools_with_input_schemas(api: Api) -> None:
    # Given a context key, When the MCP client lists tools, Then the six tools come with their input schemas, limits and
    # hints
    tools = {t['name']: t for t in rpc(api.key, 'tools/list')['result']['tools']}
    assert set(tools) == {'remember', 'recall', 'context', 'reflect', 'forget', 'inspect'}
    assert tools['recall']['inputSchema']['required'] == ['query']
    assert tools['recall']['inputSchema']['properties']['k']['maximum'] == 50
    assert tools['remember']['inputSchema']['required'] == ['text']
    assert set(tools['remember']['inputSchema']['properties']['infer']['enum']) == {'full', 'preview', 'none'}
    assert tools['inspect']['inputSchema']['required'] == ['ref']
    assert all('context_id' in t['inputSchema']['properties'] for t in tools.values())
    assert tools['recall']['annotations']['readOnlyHint'] is True and tools['forget']['annotations']['destructiveHint'] is True


def test_initialize_answers_with_server_info_and_tools_capability(api: Api) -> None:
    # Given a context key, When the client initializes, Then the server names itself, offers tools and says how to use
    # recall
    params = {'protocolVersion': '2025-06-18', 'capabilities': {}, 'clientInfo': {'name': 'pytest', 'version': '1'}}
    result = rpc(api.key, 'initialize', params)['result']
    assert result['serverInfo']['name'] == 'agent-memory' and 'tools' in result['capabilities']
    assert 'recall' in result['instructions']


# ---------------------------------------------------------------- each tool


def test_remember_none_stores_the_text_and_recall_finds_it(api: Api, store: MemoryStore) -> None:
    # Given a remember with infer=none, When the same text is recalled by meaning, Then it is stored as one chunk and is
    # the top hybrid hit, with a trace
    stored = ok(api, 'remember', text='Ada moved to Lisbon last spring.', infer='none', labels=['topic=travel'])
    assert stored['mode'] == 'none' and stored['traceId'] == stored['turnId']
    assert store.table_counts()['memory_chunk'] == 1
    found = ok(api, 'recall', query='Where does Ada live now?', k=3)
    assert found['tier'] == 'hybrid' and found['hits'][0]['text'] == 'Ada moved to Lisbon last spring.'
    assert found['trace']['traceId'].startswith('retrieval_trace:')


def test_remember_full_queues_extraction_and_the_worker_applies_it(api: Api, worker: Worker, store: MemoryStore) -> None:
    # Given a remember with the default infer=full, When the worker drains the queue, Then the turn's extraction is done
    stored = ok(api, 'remember', text='I am Ada and I work at Initech.')
    assert stored['status'] == 'queued' and stored['traceId'] == stored['turnId']  # nothing drained the queue within 5 s
    worker.drain()
    code, status, _ = api.call('facts', 'GET', f'/extractions/{stored["turnId"]}')
    assert code == 200 and status['status'] == 'done'


def test_remember_preview_changes_nothing(api: Api, store: MemoryStore) -> None:
    # Given an empty context, When remember runs with infer=preview, Then it answers a preview and no table changed
    before = snapshot(store)
    preview = ok(api, 'remember', text='My name is Ada.', infer='preview')
    assert preview['mode'] == 'preview' and snapshot(store) == before


def test_recall_reinforces_and_never_uses_the_response_cache(seeded: Api, store: MemoryStore, services: Services) -> None:
    # Given a fact and a cached /chat answer about it, When recall and context are called, Then each reinforces the fact
    # by 1.1, reads no cached answer, calls no LLM, and leaves an mcp.* retrieval trace
    def importance() -> float:
        return float(store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0])

    server = LlmTestServer(echo_sources=True).start()
    previous, services._composer = services._composer, LlmComposer(server.base_url, 'test-model', None, 5.0)
    try:
        assert seeded.call('chat', 'POST', '/chat', {'message': QUESTION})[0] == 200  # seeds the response cache
        assert seeded.call('chat', 'POST', '/chat', {'message': QUESTION})[1]['cached'] is True
        start, responses = importance(), store.table_counts()['response_trace']
        hits = ok(seeded, 'recall', query=QUESTION)['hits']
        assert any(h['text'] == 'Alice role: CTO' for h in hits)
        assert importance() == pytest.approx(start * 1.1)
        block = call(seeded, 'context', query=QUESTION)
        assert 'Alice role: CTO' in block['content'][0]['text'] and block['structuredContent']['tier'] == 'hybrid'
        assert importance() == pytest.approx(start * 1.1 * 1.1)
        assert server.chat_calls == 1 and store.table_counts()['response_trace'] == responses  # no cache read, no LLM
        endpoints = store.rows('SELECT VALUE endpoint FROM retrieval_trace WHERE endpoint CONTAINS "mcp" ORDER BY created_at;')
        assert endpoints == ['mcp.recall', 'mcp.context']
    finally:
        services._composer = previous
        server.stop()


def test_reflect_answers_and_persist_stores_a_reflection(seeded: Api, store: MemoryStore) -> None:
    # Given a seeded fact, When reflect runs plain and then with persist, Then both answer from it and only the
    # persisted one stores one reflection attribute
    plain = ok(seeded, 'reflect', query=QUESTION)
    assert 'CTO' in plain['reflection'] and not plain.get('persistedAttributes')
    persisted = ok(seeded, 'reflect', query=QUESTION, persist=True)
    assert persisted['persistedAttributes']
    assert store.rows("SELECT VALUE count() FROM attribute WHERE key = 'reflection' GROUP ALL;") == [1]


def test_forget_soft_deletes_and_dry_run_changes_nothing(seeded: Api, store: MemoryStore) -> None:
    # Given two facts about Alice, When forget runs as a dry run and then for real, Then the dry run only lists the
    # match and the real one closes just that fact
    dry = ok(seeded, 'forget', query="Alice's role is CTO", dry_run=True, k=1)
    assert dry['deleted'] == 0 and [m['text'] for m in dry['matched']] == ['Alice role: CTO']
    assert store.rows("SELECT VALUE valid_until FROM attribute WHERE key = 'role';") == [None]
    done = ok(seeded, 'forget', query="Alice's role is CTO", k=1)
    assert done['deleted'] == 1
    assert store.rows("SELECT VALUE valid_until FROM attribute WHERE key = 'role';")[0] is not None
    assert store.rows("SELECT VALUE valid_until FROM attribute WHERE key = 'employer';") == [None]


def test_inspect_entity_attribute_and_trace(seeded: Api) -> None:
    # Given seeded facts and one recall, When inspect is called for the entity, an attribute and the trace, Then each
    # comes back, the trace equal to REST /inspect
    entity = ok(seeded, 'inspect', ref='entity:person/alice')
    assert entity['kind'] == 'entity' and entity['entity']['name'] == 'Alice'
    assert {a['key'] for a in entity['attributes']} >= {'role', 'employer'}
    attribute = ok(seeded, 'inspect', ref='attribute:person/alice/role')
    assert attribute['current']['value'] == 'CTO'
    trace_id = ok(seeded, 'recall', query=QUESTION)['trace']['traceId']
    trace = ok(seeded, 'inspect', ref=f'trace:{trace_id}')
    assert trace['kind'] == 'trace' and trace['traceKind'] == 'retrieval' and trace['id'] == trace_id
    code, rest, _ = seeded.call('views', 'GET', '/inspect', query={'ref': f'trace:{trace_id}'})  # REST inspect too
    assert code == 200 and rest == trace


# ---------------------------------------------------------------- errors


def test_tool_failures_are_is_error_results_with_status(seeded: Api, store: MemoryStore) -> None:
    # Given a seeded context, When inspect names a missing entity and a malformed ref, Then each is an isError result
    # with its status (404, 400) and nothing changed
    before = snapshot(store)
    missing = call(seeded, 'inspect', ref='entity:person/nobody')
    assert missing['isError'] is True
    assert missing['structuredContent'] == {'error': {'status': 404, 'title': 'Not found', 'message': 'entity not found'}}
    assert missing['content'][0]['text'] == 'Not found (404): entity not found'
    bad_ref = call(seeded, 'inspect', ref='banana')
    assert bad_ref['isError'] is True and bad_ref['structuredContent']['error']['status'] == 400
    assert snapshot(store) == before


@pytest.mark.parametrize(
    'arguments',
    [{}, {'query': ''}, {'query': '   '}, {'query': 'x', 'k': 51}, {'query': 'x', 'k': 'ten'}, {'query': 'x', 'mode': 'psychic'},
     {'query': 'x', 'asOf': '2026-01-01T00:00:00Z'}],
    ids=['missing', 'empty', 'blank', 'k-over-50', 'k-not-int', 'bad-enum', 'unknown-field'],
)  # fmt: skip
def test_malformed_arguments_are_json_rpc_invalid_params(api: Api, arguments: dict[str, Any], store: MemoryStore) -> None:
    # Given malformed recall arguments, When the tool is called, Then it is JSON-RPC -32602 invalid params and nothing
    # changed
    before = snapshot(store)
    answer = rpc(api.key, 'tools/call', {'name': 'recall', 'arguments': arguments})
    assert 'result' not in answer and answer['error']['code'] == -32602
    assert answer['error']['message'].startswith('invalid arguments for recall:')
    assert snapshot(store) == before


@pytest.mark.parametrize(
    ('tool', 'arguments', 'problem'),
    [('recall', {'query': 'x', 'labels': ['nolabel']}, 'labels'), ('context', {'query': 'x', 'lens': [['a', 'b']]}, 'lens'),
     ('remember', {'text': 'x', 'labels': ['_x=1']}, 'labels'), ('remember', {'text': 'x', 'scope': 7}, 'scope')],
    ids=['label-without-equals', 'and-clause-lens', 'reserved-label', 'scope-not-a-list'],
)  # fmt: skip
def test_arguments_the_rest_route_would_refuse_are_invalid_params(api: Api, store: MemoryStore, tool: str, arguments: dict[str, Any],
                                                                  problem: str) -> None:  # fmt: skip
    # Given arguments the REST route refuses (labels, lens, scope), When the tool is called, Then it is -32602 naming
    # the field and nothing changed
    before = snapshot(store)
    answer = rpc(api.key, 'tools/call', {'name': tool, 'arguments': arguments})
    assert answer['error']['code'] == -32602 and problem in answer['error']['message'], answer
    assert snapshot(store) == before


def test_scope_sets_lens_and_the_scopes_alias_are_accepted(api: Api, store: MemoryStore) -> None:
    # Given a remember with the scopes alias, When recall narrows with a lens in the same shape, Then both are accepted
    # and the text is found
    stored = ok(api, 'remember', text='Team note: the retro is on Thursday.', infer='none', scopes=[['/']])
    assert stored['mode'] == 'none'
    assert ok(api, 'recall', query='When is the retro?', lens=[['/']])['hits'][0]['text'] == 'Team note: the retro is on Thursday.'


def test_text_over_the_limit_is_a_413_result_and_stores_nothing(api: Api, store: MemoryStore) -> None:
    # Given text one byte over the 64 KiB limit, When remember is called, Then it is a 413 isError result and nothing
    # changed
    before = snapshot(store)
    result = call(api, 'remember', text='x' * (64 * 1024 + 1), infer='none')
    assert result['isError'] is True and result['structuredContent']['error']['status'] == 413
    assert snapshot(store) == before


def test_unsupported_refs_say_what_is_missing(api: Api) -> None:
    # Given a document ref, When inspect is called, Then it is a 501 result saying which refs are not supported yet
    result = call(api, 'inspect', ref='document:doc_1')
    assert result['isError'] is True
    assert result['structuredContent']['error'] == {'status': 501, 'title': 'Not implemented',
                                                    'message': 'inspecting document refs is not supported yet'}  # fmt: skip


def test_headers_beyond_latin_1_are_carried(api: Api) -> None:
    # Given a header value beyond latin-1, When tools/list is called with it, Then the request is served (no encoding
    # crash)
    tools = rpc(api.key, 'tools/list', **{'x-client-name': 'café € 日本'})['result']['tools']
    assert {t['name'] for t in tools} == {'remember', 'recall', 'context', 'reflect', 'forget', 'inspect'}


def test_unknown_tool_is_method_not_found(api: Api) -> None:
    # Given a tool name that does not exist, When it is called, Then it is -32601 listing the real tools
    answer = rpc(api.key, 'tools/call', {'name': 'upload', 'arguments': {}})
    assert answer['error']['code'] == -32601 and 'remember' in answer['error']['message']


def test_write_without_the_grant_is_a_403_result(services: Services, context_id: str, store: MemoryStore) -> None:
    # Given a principal that may only read, When it calls remember, Then it is a 403 result and nothing changed, while
    # recall still works
    reader = make_principal(services, context_id, 'reader', {'memory:read': ['*']}, '/')
    before = snapshot(store)
    result = call(reader, 'remember', text='sneaky', infer='none')
    assert result['isError'] is True and result['structuredContent']['error']['status'] == 403
    assert snapshot(store) == before
    assert ok(reader, 'recall', query='anything')['hits'] == []  # reading is allowed


def test_rate_limit_is_an_http_429_with_retry_after(services: Services, context_id: str, api: Api) -> None:
    # Given a context limited to a burst of 2, When a third call comes at once, Then the transport answers HTTP 429 with
    # Retry-After
    services.control.db.query('control', 'UPDATE type::record("context", $c) SET config = $cfg;',
                              {'c': context_id, 'cfg': {'rate_limit': {'requests_per_minute': 60, 'burst': 2}}})  # fmt: skip
    assert [call(api, 'recall', query='x')['isError'] for _ in range(2)] == [False, False]
    message = {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/call', 'params': {'name': 'recall', 'arguments': {'query': 'x'}}}
    result = rpc_raw(api.key, message)
    assert result['statusCode'] == 429 and int(result['headers']['Retry-After']) >= 1
    assert json.loads(result['body'])['status'] == 429


# ---------------------------------------------------------------- auth


@pytest.mark.parametrize('key', [None, 'am_not-a-key'], ids=['no-key', 'unknown-key'])
def test_missing_or_unknown_key_is_http_401_problem(key: str | None) -> None:
    # Given no key or an unknown key, When tools/list is called, Then it is an HTTP 401 problem+json
    result = rpc_raw(key, {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'})
    assert result['statusCode'] == 401 and result['headers']['Content-Type'] == 'application/problem+json'
    assert json.loads(result['body'])['status'] == 401


def test_the_key_pins_the_context(api: Api, services: Services, store: MemoryStore) -> None:
    # a context header or tool argument naming another context is the same 401 as a bad key
    # Given a valid key, When a header or tool argument names another context, Then it is the same 401 as a bad key and
    # nothing changed; naming its own context works
    result = rpc_raw(api.key, {'jsonrpc': '2.0', 'id': 1, 'method': 'tools/list'}, {'x-agent-memory-context': 'elsewhere'})
    assert result['statusCode'] == 401
    assert rpc(api.key, 'tools/list', **{'x-spectron-context': api.context_id})['result']['tools']
    before = snapshot(store)
    wrong = call(api, 'remember', text='misrouted', infer='none', context_id='elsewhere')
    assert wrong['isError'] is True and wrong['structuredContent']['error']['status'] == 401
    assert snapshot(store) == before
    assert ok(api, 'remember', text='routed', infer='none', context_id=api.context_id)['mode'] == 'none'


# ---------------------------------------------------------------- transport


def test_transport_faults_get_the_sdk_statuses(api: Api) -> None:
    # Given a valid key, When the body is not JSON, Accept is wrong, or a notification is sent, Then the SDK's statuses
    # come back (400 -32700, 406, 202 with no body)
    not_json = rpc_raw(api.key, '{bad')
    assert not_json['statusCode'] == 400 and json.loads(not_json['body'])['error']['code'] == -32700
    wrong_accept = rpc_raw(api.key, {'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}, {'accept': 'text/plain'})
    assert wrong_accept['statusCode'] == 406
    notification = rpc_raw(api.key, {'jsonrpc': '2.0', 'method': 'notifications/initialized'})
    assert notification['statusCode'] == 202 and notification['body'] == '' and 'Content-Type' not in notification['headers']


@pytest.mark.parametrize('method', ['GET', 'DELETE'])
def test_get_and_delete_are_405_for_a_stateless_server(api: Api, method: str) -> None:
    # Given the stateless server, When GET or DELETE reaches /mcp, Then it is 405 Allow: POST with a key and 401 without
    result = rpc_raw(api.key, None, method=method)
    assert result['statusCode'] == 405 and result['headers']['Allow'] == 'POST'
    assert rpc_raw(None, None, method=method)['statusCode'] == 401


@pytest.fixture(autouse=True)
def _no_leaked_caller() -> Iterator[None]:
    from agent_memory.mcp_server.server import CURRENT_CALLER

    yield
    assert CURRENT_CALLER.get(None) is None  # each request's caller is reset when it ends
