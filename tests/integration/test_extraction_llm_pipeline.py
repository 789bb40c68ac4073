"""The worker with the LLM stage configured, against a real local OpenAI-compatible server over HTTP."""

from __future__ import annotations

from tests.support.extraction import reply
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker


def queue_turn(api: Api, text: str) -> str:
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
    assert code == 202
    return str(body['turnId'])


def test_the_model_result_is_reconciled_and_stage0_directives_are_kept(api: Api, worker: Worker, with_llm: LlmTestServer) -> None:
    # Given a model reply with a self fact, When the worker extracts the queued turn, Then the model's fact is
    # reconciled in json_schema mode and stage 0's directive is kept
    with_llm.reply_json(reply(attributes=[{'entity': {'type': 'person', 'name': 'self'}, 'key': 'occupation', 'value': 'staff engineer',
                                           'category': 'identity', 'confidence': 0.95, 'valid_from': None, 'valid_until': None,
                                           'tentative': False}]))  # fmt: skip
    turn = queue_turn(api, "I'm a staff engineer now. Always answer in bullet points.")
    worker.drain()
    assert len(with_llm.requests) == 1 and with_llm.requests[0].body['model'] == 'test-model'
    status = api.call('facts', 'GET', f'/extractions/{turn}')[1]
    assert status['status'] == 'done' and status['mode'] == 'json_schema' and 'error' not in status and 'llmError' not in status
    _, profile, _ = api.call('views', 'GET', '/profile')
    assert [(f['key'], f['value']) for f in profile['selfFacts']] == [('occupation', 'staff engineer')]
    assert [i['description'] for i in profile['instructions']] == ['Always answer in bullet points']  # from stage 0


def test_a_rate_limited_provider_fails_the_message_and_the_retry_succeeds(api: Api, worker: Worker, with_llm: LlmTestServer) -> None:
    # Given a 429 then a valid reply, When the job is delivered twice, Then the first fails for a retry (turn still
    # queued) and the second completes it
    with_llm.error(429).reply_json(reply())
    turn = queue_turn(api, 'My name is Sam.')
    first = worker.deliver(worker.receive())
    assert len(first['batchItemFailures']) == 1
    assert api.call('facts', 'GET', f'/extractions/{turn}')[1]['status'] == 'queued'
    worker.drain()
    assert api.call('facts', 'GET', f'/extractions/{turn}')[1]['status'] == 'done'
    assert len(with_llm.requests) == 2


def test_invalid_output_twice_keeps_stage0_and_records_why(api: Api, worker: Worker, with_llm: LlmTestServer) -> None:
    # Given two invalid model replies, When the turn is extracted, Then it is done with stage 0's facts and llmError
    # invalid_output
    with_llm.reply_text('not json at all').reply_text('{"still": "wrong"')
    turn = queue_turn(api, 'My name is Sam.')
    worker.drain()
    status = api.call('facts', 'GET', f'/extractions/{turn}')[1]
    assert (status['status'], status['mode'], status['llmError']) == ('done', 'stage0', 'invalid_output') and 'error' not in status
    assert [(a['key'], a['value']) for a in status['extraction']['attributes']] == [('name', 'Sam')]


def test_a_timeout_fails_the_message_for_a_retry(api: Api, worker: Worker, with_llm: LlmTestServer) -> None:
    # Given a provider that stalls, When the job is delivered, Then the message fails for a retry with a timeout error
    # on the turn
    with_llm.stall()
    turn = queue_turn(api, 'My name is Sam.')
    result = worker.deliver(worker.receive())
    assert len(result['batchItemFailures']) == 1
    assert api.call('facts', 'GET', f'/extractions/{turn}')[1]['error'] == 'LLM provider timeout; the message will be retried'
