"""The published Python client (``surrealdb-memory``, unchanged) against the local gateway over real HTTP.

Every call the client makes goes through its own transport (requests), retry policy and Idempotency-Key
header; nothing here patches it. Where its expectations and our contract differ, the server accepts what it
sends (README, "Using the published client"). A fault-injecting proxy loses responses on the way back to
prove the client's retries are applied exactly once.
"""

from __future__ import annotations

import datetime as dt
import http.client
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from surrealdb_memory import AsyncMemory, Memory, MemoryAPIError, MemoryAuthError, MemoryNotFoundError, MemoryScopeError

from tests.support.gateway import KEY, MGMT, Gateway, running_gateway

ALICE = {'type': 'person', 'name': 'Alice'}


@pytest.fixture(scope='module')
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    """The shared gateway, with the hourly sweep at its real interval: these tests count what the client's own
    ``lifecycle.expire()`` ends, and a 1 s timer would sometimes end it first."""
    with running_gateway(tmp_path_factory.mktemp('gateway') / 'data', {'AGENT_MEMORY_SWEEP_HOURLY_SECONDS': '3600'}) as running:
        yield running


@pytest.fixture(scope='module')
def memory(gateway: Gateway) -> Iterator[Memory]:
    with Memory('dev', endpoint=gateway.base, api_key=KEY) as client:
        yield client


def test_health_and_whoami(memory: Memory) -> None:
    # Given the published client against the local gateway, When health and whoami are called, Then the service is ok
    # and the key acts as admin
    assert memory.health()['status'] == 'ok'
    me = memory.whoami()
    assert me.principal_id == 'admin' and me.kind and me.effective_grants['memory:read'] == ['*']


def test_remember_triples_none_and_full(memory: Memory, gateway: Gateway) -> None:
    # Given the published client, When it remembers triples, literal text and a turn for full extraction, Then each mode
    # answers its shape and the queued turn gets extracted
    triples = memory.remember(triples=[{'entity': ALICE, 'key': 'plan', 'value': 'Pro'}], infer='triples')
    assert triples.mode == 'triples' and triples.extraction is not None
    assert [a['value'] for a in triples.extraction.attributes] == ['Pro']
    literal = memory.remember('We met on Monday at the Lisbon office.', infer='none')
    assert literal.mode == 'none' and literal.chunk_id and literal.turn_id
    queued = memory.remember('I moved to Porto last week.')  # full extraction: 202 queued, the worker runs in-process
    assert queued.mode == 'full' and queued.turn_id and queued.extraction is None
    status = _wait_done(gateway, queued.turn_id)
    assert status['status'] == 'done' and any(a['value'] == 'Porto' for a in status['extraction']['attributes'])


def _wait_done(gateway: Gateway, turn_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        code, body = gateway.request('GET', f'/api/v1/dev/extractions/{turn_id}')
        if code == 200 and body['status'] in ('done', 'failed'):
            return dict(body)
        time.sleep(0.2)
    raise AssertionError(f'extraction of {turn_id} did not finish')


def test_remember_many_writes_one_session(memory: Memory) -> None:
    # Given the published client, When it remembers two messages at once, Then both land in one session in order
    batch = memory.remember_many([{'role': 'user', 'content': 'I like green tea.'}, {'role': 'assistant', 'content': 'Noted.'}],
                                 infer='none')  # fmt: skip
    assert batch.session_id and len(batch.turn_ids) == 2
    assert [t.content for t in memory.sessions.turns(batch.session_id).turns] == ['I like green tea.', 'Noted.']


def test_recall_query_context_reflect_and_lens_scope_sets(memory: Memory) -> None:
    # Given a fact, When the client recalls (also through a lens), asks for context and reflects, Then each finds the
    # fact
    memory.remember(triples=[{'entity': ALICE, 'key': 'role', 'value': 'CTO'}], infer='triples')
    recalled = memory.recall("What is Alice's role?", k=3)
    assert recalled.tier == 'hybrid' and recalled.hits[0].text == 'Alice role: CTO' and recalled.trace['traceId']
    narrowed = memory.recall("What is Alice's role?", lens=['/', 'team/eng'])  # sent as scope sets [["/"], ["team/eng"]]
    assert [h.text for h in narrowed.hits][:1] == ['Alice role: CTO']
    context = memory.query_context('Alice')
    assert 'Alice role: CTO' in context.context and context.tier == 'hybrid'
    reflection = memory.reflect("What is Alice's role?")
    assert 'CTO' in reflection.reflection and reflection.trace_id


def test_chat_plain_and_streaming(memory: Memory) -> None:
    # Given a fact, When the client chats plainly, then streams the same question and then bypasses the cache, Then the
    # stream replays the cached answer and the bypass answers fresh with markers
    memory.remember(triples=[{'entity': ALICE, 'key': 'employer', 'value': 'Acme'}], infer='triples')
    reply = memory.chat('Where does Alice work?')
    assert 'Acme' in reply.reply and reply.session_id and reply.trace_id.startswith('response_trace:')
    cached = list(memory.chat('Where does Alice work?', stream=True))  # the same question again: the cached answer
    assert cached[-1].done is True and ''.join(c.delta for c in cached) == reply.reply
    assert all(c.trace_id == cached[0].trace_id for c in cached) and cached[0].trace_id != reply.trace_id
    fresh = list(memory.chat('Where does Alice work?', stream=True, bypass_cache=True))
    assert fresh[-1].done is True and '[S' in ''.join(c.delta for c in fresh)


def test_state_profile_and_inspect(memory: Memory) -> None:
    # Given a fact, When the client reads state, profile and inspects, Then each shows it
    memory.remember(triples=[{'entity': ALICE, 'key': 'timezone', 'value': 'CET'}], infer='triples')
    state = memory.state()
    assert any(a['value'] == 'CET' for group in (state.knowledge, state.identity, state.context) for a in group.get('attributes', []))
    profile = memory.profile()
    assert 'CET' in [entry.value for entry in profile.static + profile.dynamic + profile.preferences]
    inspected = memory.inspect('entity:person/alice')
    assert inspected['kind'] == 'entity' and inspected['entity']['name'] == 'Alice'
    attribute = memory.inspect('attribute:person/alice/timezone')
    assert attribute['current']['value'] == 'CET'


def test_profile_shows_the_users_own_facts(memory: Memory, gateway: Gateway) -> None:
    # Given a user who says where they work (a fact about their own self entity), When the published client reads the
    # profile (it reads static, dynamic and preferences, not selfFacts), Then the fact is there
    queued = memory.remember('I work at Initech.')
    assert queued.turn_id and _wait_done(gateway, queued.turn_id)['status'] == 'done'
    profile = memory.profile()
    assert ('employer', 'Initech') in [(entry.key, entry.value) for entry in profile.static + profile.dynamic + profile.preferences]


def test_entities_list_get_history_delete(memory: Memory) -> None:
    # Given a person whose name has a space and a superseded plan, When the client lists, gets, reads history and
    # deletes, Then each works through the percent-encoded path
    person = {'type': 'person', 'name': 'Bea Lovelace'}  # a space: the client percent-encodes the path
    memory.remember(triples=[{'entity': person, 'key': 'plan', 'value': 'Free'}], infer='triples')
    memory.remember(triples=[{'entity': person, 'key': 'plan', 'value': 'Pro'}], infer='triples')
    assert 'Bea Lovelace' in {e.name for e in memory.entities.list().entities}
    entity = memory.entities.get('person', 'Bea Lovelace')
    assert entity.entity.name == 'Bea Lovelace' and [a.value for a in entity.attributes] == ['Pro']
    assert [h.value for h in memory.entities.history('person', 'Bea Lovelace', 'plan').history] == ['Pro', 'Free']
    memory.entities.delete('person', 'Bea Lovelace')  # soft delete: closes the current facts (CONTRACT §10)
    assert memory.entities.get('person', 'Bea Lovelace').attributes == []


def test_sessions_create_turns_context_delete(memory: Memory) -> None:
    # Given a session with two turns, When the client lists turns, asks for context and deletes it, Then a later write
    # to it is 409
    session = memory.sessions.create(metadata={'channel': 'compat'})
    memory.remember('Let us plan the Apollo retro.', infer='none', session_id=session.id)
    memory.remember('Thursday works for me.', infer='none', session_id=session.id, role='assistant')
    turns = memory.sessions.turns(session.id, limit=10)
    assert [(t.role, t.seq) for t in turns.turns] == [('user', 1), ('assistant', 2)]
    context = memory.sessions.context(session.id, 'When is the retro?')
    assert 'Thursday works for me.' in context.context
    memory.sessions.delete(session.id)
    with pytest.raises(MemoryAPIError) as closed:
        memory.remember('too late', infer='none', session_id=session.id)
    assert closed.value.status_code == 409


def test_forget_lifecycle_and_traces(memory: Memory, gateway: Gateway) -> None:
    # Given facts, When the client forgets, runs expiry and decay, chats and reads traces, Then the forgotten fact is
    # not recalled and traces and stats are readable
    memory.remember(triples=[{'entity': ALICE, 'key': 'home_city', 'value': 'Berlin'}], infer='triples')
    forgotten = memory.forget("Alice's home city is Berlin")
    assert forgotten.deleted >= 1
    assert 'Alice home city: Berlin' not in [h.text for h in memory.recall('Where does Alice live?', k=20).hits]
    eight_days_ago = (dt.datetime.now(dt.UTC) - dt.timedelta(days=8)).isoformat()
    stale = {'infer': 'triples', 'memory_category': 'context', 'observed_at': eight_days_ago,
             'triples': [{'entity': ALICE, 'key': 'mood', 'value': 'tired'}]}  # fmt: skip
    assert gateway.request('POST', '/api/v1/dev/facts', stale)[0] == 200  # the client has no observed_at: seeded raw
    assert memory.lifecycle.expire().affected >= 1  # the 8-day-old context fact is past its 7-day TTL
    assert memory.lifecycle.decay().affected >= 1  # a day's decay over every current fact
    memory.chat('What is Alice like?')
    recalled = memory.recall('Alice', k=2)
    traces = memory.traces.list()
    assert recalled.trace['traceId'] in {t.id for t in traces.traces}
    one = memory.traces.get(recalled.trace['traceId'])  # 'retrieval_trace:…' percent-encoded in the path
    assert one.id == recalled.trace['traceId'] and one.query_text == 'Alice' and one.resolution_tier == 'hybrid'
    stats = memory.traces.stats()
    assert stats.total_queries >= 1 and stats.response_traces_total >= 1


def test_error_mapping(gateway: Gateway, memory: Memory) -> None:
    # Given bad keys, missing entities, bad input and a read-only key, When the client calls, Then each maps to its
    # error class with status and message
    with Memory('dev', endpoint=gateway.base, api_key='am_wrong') as stranger, pytest.raises(MemoryAuthError) as denied:
        stranger.whoami()
    assert denied.value.status_code == 401 and denied.value.message == 'missing, invalid or expired API key'
    with pytest.raises(MemoryNotFoundError) as missing:
        memory.entities.get('person', 'nobody at all')
    assert missing.value.status_code == 404 and missing.value.message == 'entity not found'
    with pytest.raises(MemoryAPIError) as invalid:
        memory.recall('x', k=51)
    assert invalid.value.status_code == 400 and 'k' in invalid.value.message
    reader_key = _reader_key(gateway)
    with Memory('dev', endpoint=gateway.base, api_key=reader_key) as reader, pytest.raises(MemoryScopeError) as refused:
        reader.remember('not allowed', infer='none')
    assert refused.value.status_code == 403


def test_on_behalf_of_sends_the_record_form_and_acts_as_that_principal(memory: Memory, gateway: Gateway) -> None:
    # Given a reader principal, When whoami is called on its behalf (record form and bare id), Then the admin key acts
    # with the reader's grants
    _reader_key(gateway)  # makes sure principal compat-reader exists
    me = memory.whoami(on_behalf_of='principal:compat-reader')  # X-Memory-On-Behalf-Of: principal:<id>
    assert me.principal_id == 'admin' and me.delegated_principal_id == 'compat-reader'  # the key's own, and whom it acts for
    assert me.effective_grants['memory:read'] == ['*'] and not me.effective_grants.get('memory:write')
    assert memory.whoami(on_behalf_of='compat-reader').delegated_principal_id == 'compat-reader'


def test_inspect_with_a_time_is_refused_not_ignored(memory: Memory) -> None:
    # Given the client, When inspect is asked with a time, Then it is a 400 saying asOf is not supported
    with pytest.raises(MemoryAPIError) as refused:
        memory.inspect('entity:person/alice', as_of='2026-01-01T00:00:00Z')
    assert refused.value.status_code == 400 and 'asOf is not supported' in refused.value.message


def _reader_key(gateway: Gateway) -> str:
    code, _ = gateway.request('POST', '/api/v1/contexts/dev/principals', {'id': 'compat-reader', 'displayName': 'Reader',
                              'kind': 'agent', 'grants': {'memory:read': ['*']}}, key=MGMT)  # fmt: skip
    assert code in (201, 409)
    name = f'compat-{time.monotonic_ns()}'
    code, body = gateway.request('POST', f'/api/v1/contexts/dev/principals/compat-reader/keys/{name}', {}, key=MGMT)
    assert code == 201, body
    return str(body['secret'])


def test_async_client_reads_and_writes(gateway: Gateway) -> None:
    # Given the async client, When it writes triples and recalls, Then both work
    import asyncio

    async def scenario() -> tuple[str, list[str]]:
        async with AsyncMemory('dev', endpoint=gateway.base, api_key=KEY) as client:
            written = await client.remember(triples=[{'entity': ALICE, 'key': 'pet', 'value': 'a cat named Rho'}], infer='triples')
            recalled = await client.recall('Does Alice have a pet?', k=3)
            return written.mode, [h.text for h in recalled.hits]

    mode, texts = asyncio.run(scenario())
    assert mode == 'triples' and 'Alice pet: a cat named Rho' in texts


# ---------------------------------------------------------------- Idempotency-Key retries


class LossyProxy:
    """Forwards to the gateway; for armed paths it forwards the request (the write happens) but answers the
    client 503, as a response lost to a load balancer would look. The client must retry with the same key."""

    def __init__(self, upstream: str) -> None:
        self.armed: dict[str, int] = {}
        self.seen: list[tuple[str, str, str | None]] = []
        target = urlsplit(upstream)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def _relay(self) -> None:
                body = self.rfile.read(int(self.headers.get('content-length') or 0))
                proxy.seen.append((self.command, self.path, self.headers.get('Idempotency-Key')))
                upstream_conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ('host', 'content-length')}
                upstream_conn.request(self.command, self.path, body=body or None, headers=headers)
                answer = upstream_conn.getresponse()
                data, status, answer_headers = answer.read(), answer.status, answer.getheaders()
                upstream_conn.close()
                path = urlsplit(self.path).path
                if proxy.armed.get(path, 0) > 0:
                    proxy.armed[path] -= 1
                    status, data, answer_headers = 503, b'{"message": "upstream reset"}', [('content-type', 'application/json')]
                self.send_response(status)
                for key, value in answer_headers:
                    if key.lower() not in ('content-length', 'transfer-encoding', 'connection'):
                        self.send_header(key, value)
                self.send_header('content-length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = _relay

            def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
                return

        self.server = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        self.base = f'http://127.0.0.1:{self.server.server_address[1]}'
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()


def test_lost_responses_are_retried_with_the_same_idempotency_key_and_applied_once(gateway: Gateway) -> None:
    # Given a proxy that loses some answers, When the client writes and retries, Then every retry carries the same
    # Idempotency-Key and each write lands once
    proxy = LossyProxy(gateway.base)
    try:
        with Memory('dev', endpoint=proxy.base, api_key=KEY) as client:
            session = client.sessions.create()
            proxy.armed = {'/api/v1/dev/facts': 2, '/api/v1/dev/facts/batch': 1}
            written = client.remember('Retried once, stored once.', infer='none', session_id=session.id)
            batch = client.remember_many([{'role': 'user', 'content': 'Batch retried once.'}], session_id=session.id, infer='none')
            turns = client.sessions.turns(session.id).turns
    finally:
        proxy.close()
    posts = [(path, key) for method, path, key in proxy.seen if method == 'POST' and path.startswith('/api/v1/dev/facts')]
    assert len(posts) == 5  # 3 attempts of /facts (two answers lost), 2 of /facts/batch (one lost)
    assert all(key for _, key in posts) and len({key for path, key in posts if path.endswith('/facts')}) == 1
    assert [t.content for t in turns] == ['Retried once, stored once.', 'Batch retried once.']  # each applied once
    assert written.turn_id == turns[0].id and batch.turn_ids == [turns[1].id]


def test_a_retry_never_reaches_a_different_write(gateway: Gateway) -> None:
    # the same key with a different body is a conflict, not a silent replay of the first answer
    # Given an Idempotency-Key already used, When it is sent with another body, Then it is 409, not the first answer
    key = 'compat-conflict-key'
    first = _post_with_key(gateway, key, 'first body')
    second = _post_with_key(gateway, key, 'second body')
    assert first == 200 and second == 409


def _post_with_key(gateway: Gateway, key: str, text: str) -> int:
    connection = http.client.HTTPConnection('127.0.0.1', int(urlsplit(gateway.base).port or 80), timeout=30)
    body = f'{{"text": "{text}", "infer": "none"}}'
    connection.request('POST', '/api/v1/dev/facts', body=body,
                       headers={'Authorization': f'Bearer {KEY}', 'Content-Type': 'application/json', 'Idempotency-Key': key})  # fmt: skip
    status = connection.getresponse().status
    connection.close()
    return status
