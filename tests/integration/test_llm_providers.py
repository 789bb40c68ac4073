"""OpenAI-compatible servers as users run them (issue 16), through the worker Lambda and the /chat handler.

Each ``PROFILES`` entry configures the test server like a real server: llama-cpp-python (refuses
``json_schema`` with an HTTP 500 validation body), a server without structured output, a model that
writes prose around its JSON, a model that never emits citation markers. For each: stage 0 is kept,
the structured-output fallback is taken, a failure is recorded as a classified reason without the
provider's text, and an uncited /chat answer is invalidated when its fact is superseded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from agent_memory.adapters.openai_composer import LlmComposer
from agent_memory.composition import Services, build_extractors
from agent_memory.config import get_settings
from agent_memory.db.trace_reads import TraceReads
from agent_memory.domain.extraction_pipeline import Extractors
from agent_memory.extraction.llm import LlmExtractor
from agent_memory.extraction.structured_output import LearnedModes
from tests.support.handlers import Api
from tests.support.llm_server import VALIDATION_MESSAGE, LlmTestServer
from tests.support.worker import Worker

SAM_TURN = (
    'Hi, I am Sam. I work at Acme as a data engineer and I moved from the Free plan to Pro last week. Always answer in bullet points.'
)
STAGE0_FACTS = {('name', 'Sam'), ('employer', 'Acme'), ('occupation', 'data engineer'), ('plan', 'Pro')}
SELF = {'type': 'person', 'name': 'self'}
PROVIDER_TEXT = ('validation error', 'File "', 'site-packages', 'CreateChatCompletionRequest', '/srv/')


def llm_reply(*facts: tuple[str, str]) -> dict[str, Any]:
    attributes = [
        {'entity': SELF, 'key': key, 'value': value, 'category': 'identity', 'confidence': 0.95, 'valid_from': None, 'valid_until': None,
         'tentative': False}
        for key, value in facts
    ]  # fmt: skip
    return {'entities': [SELF], 'attributes': attributes, 'relations': [], 'actions': [], 'instructions': [], 'uncertainties': [],
            'invalidations': []}  # fmt: skip


# name → (configure the server, the structured-output mode the extraction ends up using)
PROFILES: dict[str, tuple[Callable[[LlmTestServer], object], str]] = {
    'llama-cpp-python': (lambda s: s.refuse_formats('json_schema'), 'json_object'),
    'no-structured-output': (lambda s: s.refuse_formats('json_schema', 'json_object', status=400), 'prompt'),
    'prose-around-json': (lambda s: (s.refuse_formats('json_schema', 'json_object', status=422), setattr(s, 'prose', True)), 'prompt'),
    'no-citation-markers': (lambda s: setattr(s, 'markers', False), 'json_schema'),
}


@pytest.fixture
def server(services: Services, monkeypatch: pytest.MonkeyPatch) -> Iterator[LlmTestServer]:
    """Extraction and /chat synthesis both routed to one test server (the real openai client, real HTTP)."""
    llm = LlmTestServer().start()
    extractor = LlmExtractor(base_url=llm.base_url, model='local-model', timeout_seconds=2, learned=LearnedModes())
    monkeypatch.setattr(services, 'extractors', Extractors(stage0=services.extractors.stage0, llm=extractor))
    monkeypatch.setattr(services, '_composer', LlmComposer(llm.base_url, 'local-model', None, 5.0))
    yield llm
    extractor.close()
    llm.stop()


def queue_turn(api: Api, text: str = SAM_TURN) -> str:
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
    assert code == 202, body
    return str(body['turnId'])


def extraction(api: Api, turn: str) -> dict[str, Any]:
    code, body, _ = api.call('facts', 'GET', f'/extractions/{turn}')
    assert code == 200, body
    return body


def self_facts(api: Api) -> set[tuple[str, str]]:
    _, profile, _ = api.call('views', 'GET', '/profile')
    return {(f['key'], f['value']) for f in profile['selfFacts']}


def instructions(api: Api) -> list[str]:
    _, profile, _ = api.call('views', 'GET', '/profile')
    return [i['description'] for i in profile['instructions']]


def assert_no_provider_text(body: dict[str, Any]) -> None:
    text = json.dumps(body)
    assert not [marker for marker in PROVIDER_TEXT if marker in text], text


# -- extraction through the worker ------------------------------------------------------------------------------------


@pytest.mark.parametrize('profile', PROFILES)
def test_each_server_profile_extracts_with_the_strongest_accepted_mode(
    api: Api, worker: Worker, server: LlmTestServer, profile: str
) -> None:
    # Given a server profile (what it accepts) and a model reply, When a queued turn is extracted, Then the strongest
    # accepted mode is used, the model's extra fact lands and stage 0's directive is kept
    configure, expected_mode = PROFILES[profile]
    configure(server)
    server.reply_json(llm_reply(('name', 'Sam'), ('employer', 'Acme'), ('plan', 'Pro'), ('team', 'data platform')))

    turn = queue_turn(api)
    worker.drain()

    status = extraction(api, turn)
    assert status['status'] == 'done' and status['mode'] == expected_mode and 'llmError' not in status
    assert ('team', 'data platform') in self_facts(api)  # only the model found this one
    assert instructions(api) == ['Always answer in bullet points']  # stage 0's directive is always kept
    sent = [(r.body.get('response_format') or {}).get('type') for r in server.requests]
    assert sent == {'json_schema': ['json_schema'], 'json_object': ['json_schema', 'json_object'],
                    'prompt': ['json_schema', 'json_object', None]}[expected_mode]  # fmt: skip
    if expected_mode != 'json_schema':  # the server does not get the schema as a parameter: it is in the prompt
        assert '"memory_extraction" JSON schema' in server.requests[-1].message('system')


@pytest.mark.parametrize('profile', ['llama-cpp-python', 'no-structured-output'])
def test_the_accepted_mode_is_remembered_for_the_next_turn(api: Api, worker: Worker, server: LlmTestServer, profile: str) -> None:
    # Given a profile that refuses the strongest mode, When a second turn is extracted, Then it goes straight to the
    # mode that worked
    configure, expected_mode = PROFILES[profile]
    configure(server)
    server.reply_json(llm_reply(('name', 'Sam'))).reply_json(llm_reply(('plan', 'Pro')))
    queue_turn(api, 'My name is Sam.')
    worker.drain()
    probing = len(server.requests)

    second = queue_turn(api, 'My plan is Pro.')
    worker.drain()

    assert len(server.requests) == probing + 1  # straight to the mode that worked, no rejected request first
    assert extraction(api, second)['mode'] == expected_mode


def test_a_server_refusing_every_mode_keeps_stage0_and_records_the_class_only(api: Api, worker: Worker, server: LlmTestServer) -> None:
    # Given a server refusing every mode, When a turn is extracted, Then stage 0's facts are kept, the error class (not
    # the provider's text) is recorded, and SQS does not retry
    server.refuse_formats('json_schema', 'json_object')
    server.validation_error()  # the plain-prompt request is refused too

    turn = queue_turn(api)
    worker.drain()

    status = extraction(api, turn)
    assert status['status'] == 'done' and status['mode'] == 'stage0' and status['llmError'] == 'request_rejected'
    assert_no_provider_text(status)
    assert self_facts(api) >= STAGE0_FACTS
    assert instructions(api) == ['Always answer in bullet points']
    assert len(server.requests) == 3  # one per mode, no SQS retry: the same request cannot succeed later
    assert worker.dead_letters() == []


def test_an_extraction_prompt_longer_than_the_context_window_keeps_stage0_and_says_so(
    api: Api, worker: Worker, server: LlmTestServer
) -> None:
    # Given a server whose 300-token context window is smaller than the extraction prompt, When the worker extracts a queued turn, Then the
    # message is not retried and the extraction is done in stage0 with llmError context_exceeded after one chat call, without provider text
    server.context_tokens = 300  # the extraction prompt (rules, schema, turn) is thousands of tokens

    turn = queue_turn(api)
    first = worker.deliver(worker.receive())

    assert first['batchItemFailures'] == []  # the same prompt cannot fit later
    body = extraction(api, turn)
    assert body['status'] == 'done' and body['mode'] == 'stage0' and body['llmError'] == 'context_exceeded'
    assert server.chat_calls == 1  # a weaker mode only adds the schema to the prompt: not tried
    assert_no_provider_text(body)
    assert self_facts(api) >= STAGE0_FACTS


@pytest.mark.parametrize(
    ('status', 'message', 'reason'),
    [
        (404, 'The model `smollm3` does not exist at /srv/models/smollm3.gguf', 'model_not_found'),
        (401, 'Incorrect API key provided: sk-abc. File "/srv/app.py"', 'auth_failed'),
        (500, VALIDATION_MESSAGE, 'request_rejected'),
    ],
)
def test_a_permanent_error_keeps_stage0_on_the_first_delivery(
    api: Api, worker: Worker, server: LlmTestServer, status: int, message: str, reason: str
) -> None:
    # Given a permanent provider error (404, 401, validation), When a turn is delivered once, Then it is done with stage
    # 0's facts, the reason recorded without provider text, and no retry
    if status == 500:  # a validation error is mode-dependent: every mode is tried, all are refused
        server.refuse_formats('json_object', 'json_schema')
    server.error(status, message)

    turn = queue_turn(api)
    first = worker.deliver(worker.receive())

    assert first['batchItemFailures'] == []  # not retried by SQS
    body = extraction(api, turn)
    assert body['status'] == 'done' and body['mode'] == 'stage0' and body['llmError'] == reason
    assert_no_provider_text(body)
    assert self_facts(api) >= STAGE0_FACTS


@pytest.mark.parametrize(('status', 'reason'), [(429, 'rate_limited'), (502, 'server_error'), (503, 'server_error'), (504, 'server_error')])
def test_transient_errors_are_retried_then_the_final_delivery_keeps_stage0(
    api: Api, worker: Worker, server: LlmTestServer, services: Services, status: int, reason: str
) -> None:
    # Given a transient error on every delivery, When the worker drains, Then each delivery but the last is retried with
    # a generic error and the last keeps stage 0, with no dead letter
    for _ in range(services.max_receives):
        server.error(status, 'upstream said: File "/srv/gateway.py", line 12')

    turn = queue_turn(api)
    first = worker.deliver(worker.receive())

    assert len(first['batchItemFailures']) == 1
    queued = extraction(api, turn)
    assert queued['status'] == 'queued' and queued['error'] == f'LLM provider {reason}; the message will be retried'
    assert_no_provider_text(queued)
    worker.drain()
    done = extraction(api, turn)
    assert done['status'] == 'done' and done['mode'] == 'stage0' and done['llmError'] == reason and 'error' not in done
    assert self_facts(api) >= STAGE0_FACTS
    assert len(server.requests) == services.max_receives
    assert worker.dead_letters() == []


def test_a_timeout_on_every_delivery_keeps_stage0(api: Api, worker: Worker, server: LlmTestServer, services: Services) -> None:
    # Given a provider that stalls on every delivery, When the worker drains, Then the final delivery keeps stage 0 with
    # llmError timeout
    for _ in range(services.max_receives):
        server.stall()

    turn = queue_turn(api, 'My name is Sam.')
    worker.drain()

    body = extraction(api, turn)
    assert (body['status'], body['mode'], body['llmError']) == ('done', 'stage0', 'timeout')
    assert ('name', 'Sam') in self_facts(api)


def test_a_redelivered_job_after_the_stage0_fallback_is_not_applied_twice(
    api: Api, worker: Worker, server: LlmTestServer, services: Services
) -> None:
    # Given a turn completed by the stage-0 fallback, When SQS delivers the same job again, Then nothing changes and the
    # provider is not asked again
    for _ in range(services.max_receives):
        server.error(503)
    turn = queue_turn(api)
    messages = worker.receive()
    body = messages[0]['Body']
    worker.deliver(messages)
    worker.drain()
    before = extraction(api, turn)

    worker.sqs.send_message(QueueUrl=worker.queue_url, MessageBody=body)  # SQS at-least-once: the same job again
    worker.drain()

    assert extraction(api, turn) == before
    _, profile, _ = api.call('views', 'GET', '/profile')
    assert sorted((f['key'], f['value']) for f in profile['selfFacts']) == sorted(STAGE0_FACTS)
    assert len(server.requests) == services.max_receives  # the done turn is not extracted again


# -- /chat ----------------------------------------------------------------------------------------------------------

SAM = {'type': 'person', 'name': 'Sam'}
QUESTION = 'What plan is Sam on?'


def remember_plan(api: Api, value: str) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': SAM, 'key': 'plan', 'value': value}]})
    assert code == 200, body


def chat(api: Api, message: str = QUESTION) -> dict[str, Any]:
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message})
    assert code == 200, body
    return body


@pytest.mark.parametrize('profile', PROFILES)
def test_an_uncited_answer_is_invalidated_when_its_fact_is_superseded(api: Api, server: LlmTestServer, profile: str) -> None:
    # Given an answer that cites nothing but was built from a fact, When that fact is superseded, Then the next ask is
    # fresh and says the new value
    PROFILES[profile][0](server)
    server.markers = False  # the model never cites, whatever the profile
    server.reply_text('The plan Sam is on is Pro. [S1]').reply_text('Sam is on the Enterprise plan. [S1]')
    remember_plan(api, 'Pro')

    first = chat(api)
    assert 'Pro' in first['reply'] and first['citations'] == [] and first['cached'] is False
    assert 'Sam plan: Pro' in server.requests[0].message('user')  # the fact was in the prompt: the answer was built from it
    remember_plan(api, 'Enterprise')  # supersedes Pro
    again = chat(api)

    assert again['cached'] is False and 'Enterprise' in again['reply']
    assert server.chat_calls == 2


def test_an_uncited_answer_is_served_from_the_cache_while_its_sources_are_current(api: Api, server: LlmTestServer) -> None:
    # Given an uncited answer whose sources are current, When the question is asked again, Then it is served from the
    # cache
    server.markers = False
    server.reply_text('The plan Sam is on is Pro.')
    remember_plan(api, 'Pro')

    chat(api)
    again = chat(api)

    assert again['cached'] is True and again['reply'] == 'The plan Sam is on is Pro.' and server.chat_calls == 1


def test_an_answer_built_from_nothing_is_not_cached(api: Api, server: LlmTestServer) -> None:
    # Given an answer built with no sources, When a fact arrives and the question is asked again, Then the answer is
    # fresh
    server.reply_text("I don't know Sam's plan.").reply_text('Sam is on the Pro plan.')

    assert chat(api)['cached'] is False
    remember_plan(api, 'Pro')  # a fact about an entity the first answer could not have named
    again = chat(api)

    assert again['cached'] is False and 'Pro' in again['reply']


@pytest.mark.parametrize('profile', PROFILES)
def test_chat_answers_and_streams_on_every_server_profile(api: Api, server: LlmTestServer, profile: str) -> None:
    # Given a server profile, When /chat streams, Then it answers as server-sent events and synthesis never asks for
    # structured output
    PROFILES[profile][0](server)
    server.reply_text('Sam is on Pro [S1].')
    remember_plan(api, 'Pro')

    result = api.call_raw('chat', 'POST', '/chat', {'message': QUESTION, 'stream': True})

    assert result['statusCode'] == 200 and 'text/event-stream' in result['headers']['Content-Type']
    assert 'Pro' in result['body'] and 'response_format' not in server.requests[0].body  # synthesis never asks for structured output


def test_chat_answers_in_full_when_the_server_cuts_streams_while_busy(api: Api, server: LlmTestServer) -> None:
    """llama-cpp-python ends a streamed completion with [DONE] as soon as another request (an extraction) waits for the
    model: a streamed synthesis got no content, and /chat answered 503 (the real-server check, docs/llm-providers.md)."""
    # Given a busy server that ends streamed completions early, When /chat answers once plainly and once streamed, Then the plain reply is
    # full with its citation and the streamed deltas add up to the final reply
    server.busy = True
    server.reply_text('Sam is on the Pro plan [S1].').reply_text('Sam is on the Pro plan [S1].')
    remember_plan(api, 'Pro')

    answer = chat(api)
    streamed = api.call_raw('chat', 'POST', '/chat', {'message': QUESTION, 'stream': True, 'bypassCache': True})

    assert answer['reply'] == 'Sam is on the Pro plan [S1].' and answer['citations'][0]['marker'] == '[S1]'
    frames = [json.loads(line[len('data: ') :]) for line in streamed['body'].splitlines() if line.startswith('data: ')]
    assert streamed['statusCode'] == 200 and ''.join(f['delta'] for f in frames[:-1]) == frames[-1]['reply'], streamed['body']


def remember_passages(api: Api, count: int) -> None:
    for n in range(count):
        text = f'Note {n} about the Sam account: ' + 'the quarterly review covered usage, seats and invoices in detail. ' * 8
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': text, 'infer': 'none'})
        assert code == 200, body


def test_a_synthesis_prompt_over_the_context_window_is_answered_from_the_best_ranked_sources(
    api: Api, server: LlmTestServer, services: Services
) -> None:
    """A small local model (n_ctx 4096) refuses a prompt of 12 long passages: the answer is built from the sources that
    fit, best-ranked first, and is recorded as built from those alone."""
    # Given twelve long passages and a context window of about three, When /chat asks about them, Then the prompt is sent again with fewer
    # sources until it fits, the answer cites exactly the sources sent, and the trace records only those as read
    remember_plan(api, 'Pro')
    remember_passages(api, 12)
    server.context_tokens = 800  # about three of the passages
    server.echo_sources = True  # the model cites every source it was given

    answer = chat(api, 'What plan is Sam on, and what did the quarterly review of the Sam account cover?')

    sent = server.requests[-1].message('user')
    given = re.findall(r'\[S\d+\]', sent)
    assert 0 < len(given) < 12 and len(server.requests) > 1  # refused, then sent again with fewer sources
    assert all(len(r.message('user')) > len(sent) for r in server.requests[:-1])
    assert sorted(c['marker'] for c in answer['citations']) == sorted(given)
    trace = TraceReads(services.store(api.context_id)).get('response_trace', answer['traceId'].split(':', 1)[1])
    assert trace is not None and len(trace.read_sources) == len(given)  # built from what was sent, for the cache's checks


def test_a_message_that_alone_exceeds_the_context_window_is_a_422_that_says_so(api: Api, server: LlmTestServer) -> None:
    # Given a 20-token context window, When /chat gets a message too long for it even without sources, Then it answers 422 naming the
    # context window, without the provider's text, after a last try with no sources
    server.context_tokens = 20
    remember_plan(api, 'Pro')

    code, body, _ = api.call('chat', 'POST', '/chat', {'message': QUESTION + ' Please answer in detail, with every plan change.'})

    assert code == 422 and 'context window' in body['detail'], body  # what the user can act on, not the provider's text
    assert_no_provider_text(body)
    assert '(nothing relevant in memory)' in server.requests[-1].message('user')  # sent again with fewer sources, then none


def test_a_synthesis_validation_error_is_a_503_without_provider_text(api: Api, server: LlmTestServer) -> None:
    # Given a provider refusing the synthesis request (twice), When /chat is asked, Then it is a 503 that carries no
    # provider text
    server.validation_error().validation_error()  # the client's one retry too
    remember_plan(api, 'Pro')

    code, body, _ = api.call('chat', 'POST', '/chat', {'message': QUESTION})

    assert code == 503
    assert_no_provider_text(body)


def test_a_valid_but_empty_model_reply_keeps_stage0_facts(api: Api, worker: Worker, server: LlmTestServer) -> None:
    # Given a valid but empty model reply, When a turn is extracted, Then stage 0's facts and directive are kept
    server.reply_json(llm_reply())  # what a tiny model often answers: valid, and empty

    turn = queue_turn(api)
    worker.drain()

    assert extraction(api, turn)['mode'] == 'json_schema'
    assert self_facts(api) >= STAGE0_FACTS
    assert instructions(api) == ['Always answer in bullet points']


def test_the_model_corrects_a_stage0_value_at_the_same_address(api: Api, worker: Worker, server: LlmTestServer) -> None:
    # Given a model value at an address stage 0 also filled, When the turn is extracted, Then the model's value wins and
    # stage 0 keeps the other addresses
    server.reply_json(llm_reply(('plan', 'Pro annual')))

    queue_turn(api)
    worker.drain()

    facts = self_facts(api)
    assert ('plan', 'Pro annual') in facts and ('plan', 'Pro') not in facts  # one plan: the model's
    assert {('name', 'Sam'), ('employer', 'Acme')} <= facts  # the addresses it left empty keep stage 0's values


def test_a_preview_with_the_provider_down_shows_stage0(api: Api, server: LlmTestServer) -> None:
    # Given the provider down, When a turn is previewed, Then stage 0's facts are shown without provider text
    server.error(503, 'upstream said: File "/srv/gateway.py", line 12')  # nothing retries a synchronous preview

    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'preview', 'text': SAM_TURN})

    assert code == 200, body
    assert {(a['key'], a['value']) for a in body['extraction']['attributes']} >= STAGE0_FACTS
    assert_no_provider_text(body)


def test_the_configured_output_cap_is_sent_on_every_extraction_request(
    api: Api, worker: Worker, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A small model looping inside a JSON object otherwise generates until the server's context is full (minutes)."""
    # Given AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS=256, When a turn needs a fallback and a repair, Then every request
    # carries max_tokens 256
    llm = LlmTestServer().start()
    llm.refuse_formats('json_schema').reply_text('{"entities": [').reply_json(llm_reply(('name', 'Sam')))
    monkeypatch.setenv('AGENT_MEMORY_LLM_BASE_URL', llm.base_url)
    monkeypatch.setenv('AGENT_MEMORY_LLM_EXTRACTION_MODEL', 'capped-model')
    monkeypatch.setenv('AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS', '256')
    settings = get_settings.__wrapped__()  # read from the environment now, leaving the cached settings alone
    try:
        monkeypatch.setattr(services, 'extractors', build_extractors(settings))
        turn = queue_turn(api, 'My name is Sam.')
        worker.drain()
    finally:
        llm.stop()

    assert extraction(api, turn)['mode'] == 'json_object'
    assert [r.body.get('max_tokens') for r in llm.requests] == [256, 256, 256]  # rejected mode, truncated reply, repair


def test_the_configured_output_cap_is_sent_on_synthesis_too(api: Api, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    """A local server without its own cap lets a small model ramble until its context is full."""
    # Given a server without its own cap and AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS=256, When /chat synthesises an answer, Then its one request
    # carries the configured model and max_tokens 256
    llm = LlmTestServer().start()
    llm.reply_text('Sam is on Pro [S1].')
    monkeypatch.setenv('AGENT_MEMORY_LLM_BASE_URL', llm.base_url)
    monkeypatch.setenv('AGENT_MEMORY_LLM_EXTRACTION_MODEL', 'capped-model')
    monkeypatch.setenv('AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS', '256')
    settings = get_settings.__wrapped__()
    monkeypatch.setattr('agent_memory.composition.get_settings', lambda: settings)
    monkeypatch.setattr(services, '_composer', None)  # built from these settings on first use
    remember_plan(api, 'Pro')
    try:
        chat(api)
    finally:
        llm.stop()

    assert [(r.body['model'], r.body.get('max_tokens')) for r in llm.requests] == [('capped-model', 256)]


def test_no_output_cap_is_sent_unless_configured(api: Api, worker: Worker, server: LlmTestServer) -> None:
    # Given no output cap configured, When a turn is extracted, Then no request carries max_tokens
    server.reply_json(llm_reply(('name', 'Sam')))
    queue_turn(api, 'My name is Sam.')
    worker.drain()

    assert server.requests and all('max_tokens' not in r.body for r in server.requests)
