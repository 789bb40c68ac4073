"""Turns in over the API, through the (moto) SQS queue and the worker Lambda, memory out (CONTRACT §6)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain import pipeline as write_pipeline
from tests.support.clock import VirtualTime
from tests.support.db_snapshot import snapshot
from tests.support.extraction import say, self_facts
from tests.support.handlers import Api
from tests.support.worker import Worker


def test_a_turn_is_queued_then_extracted_by_the_worker(api: Api, worker: Worker) -> None:
    # Given a user turn accepted with 202
    body = say(api, "My name is Sam and I'm on the Pro plan.")
    assert api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]['status'] == 'queued'
    # When the worker consumes the SQS message
    assert worker.drain() == 1
    # Then the extraction is done, its diff recorded, and the facts are in the speaker's profile
    code, extraction, _ = api.call('facts', 'GET', f'/extractions/{body["turnId"]}')
    assert code == 200 and extraction['status'] == 'done'
    assert {(a['key'], a['value']) for a in extraction['extraction']['attributes']} == {('name', 'Sam'), ('plan', 'Pro')}
    assert self_facts(api) == {'name': ['Sam'], 'plan': ['Pro']}
    turns = api.call('sessions', 'GET', f'/sessions/{body["sessionId"]}/turns')[1]['turns']
    assert [t['extraction'] for t in turns] == ['done']


def test_a_plan_change_supersedes_and_reports_a_correction(api: Api, worker: Worker) -> None:
    # Given 'Free plan' then 'moved from Free to Pro' in one session, When both are extracted, Then the plan is Pro and
    # the history shows Free superseded
    first = say(api, "I'm on the Free plan.")
    say(api, 'I moved from Free to Pro.', session_id=first['sessionId'])
    worker.drain()
    assert self_facts(api)['plan'] == ['Pro']
    _, history, _ = api.call('entities', 'GET', '/entities/person/self:admin/history/plan')
    assert [(h['value'], h['supersededBy'] is not None) for h in history['history']] == [('Pro', False), ('Free', True)]


def test_the_same_message_delivered_twice_applies_once(api: Api, store: MemoryStore, worker: Worker) -> None:
    # Given one queued turn
    say(api, 'I live in Berlin and I prefer green tea.')
    (message,) = worker.receive()
    # When SQS delivers the job twice (at-least-once: a redelivery, or a duplicate send)
    assert worker.deliver([message]) == {'batchItemFailures': []}
    after_first = snapshot(store)
    assert store.table_counts()['attribute'] >= 2
    worker.sqs.send_message(QueueUrl=worker.queue_url, MessageBody=message['Body'])
    assert worker.drain() == 1
    # Then nothing is added the second time
    assert snapshot(store) == after_first


def test_a_crash_before_commit_leaves_nothing_and_the_retry_completes(api: Api, store: MemoryStore, worker: Worker,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    # Given a queued turn and an apply that crashes once, When the job is delivered and redelivered, Then the first
    # leaves nothing applied with the error on the turn and the retry applies it once
    body = say(api, 'I work at Acme.')
    before = store.table_counts()
    real_apply = MemoryStore.apply
    calls = {'n': 0}

    def crash_once(self: MemoryStore, plan: Any) -> None:
        calls['n'] += 1
        if calls['n'] == 1:
            raise RuntimeError('worker died between extraction and commit')
        real_apply(self, plan)

    monkeypatch.setattr(MemoryStore, 'apply', crash_once)
    # When the first delivery crashes, the message fails and nothing of the turn is applied
    result = worker.deliver(worker.receive())
    assert len(result['batchItemFailures']) == 1
    assert store.table_counts()['attribute'] == before['attribute']
    status = api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]
    assert status['status'] == 'queued' and 'RuntimeError' in status['error']
    # Then the redelivery completes it, exactly once
    worker.drain()
    assert api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]['status'] == 'done'
    assert self_facts(api)['employer'] == ['Acme']


def test_a_poison_message_ends_in_the_dead_letter_queue_with_the_failure_on_the_turn(
    api: Api, store: MemoryStore, worker: Worker, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn whose apply always fails, When the worker drains, Then the job ends in the dead-letter queue and the
    # turn says failed, with the error
    body = say(api, 'I work at Initech.')

    def always_fail(self: MemoryStore, plan: Any) -> None:
        raise RuntimeError('this turn can never be applied')

    monkeypatch.setattr(MemoryStore, 'apply', always_fail)
    worker.drain()
    assert [json.loads(m['Body'])['turnIds'] for m in worker.dead_letters()] == [[body['turnId']]]
    status = api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]
    assert status['status'] == 'failed' and 'never be applied' in status['error']


def test_prefer_wait_answers_200_with_the_diff_when_the_worker_is_quick(api: Api, worker: Worker) -> None:
    # Given a worker draining in the background, When a write asks Prefer: wait=10, Then it answers 200 done with the
    # extracted diff
    stop = threading.Event()

    def consume() -> None:
        while not stop.is_set():
            worker.drain()
            time.sleep(0.05)

    consumer = threading.Thread(target=consume)
    consumer.start()
    try:
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': 'My name is Ada.'}, headers={'Prefer': 'wait=10'})
    finally:
        stop.set()
        consumer.join()
    assert code == 200 and body['status'] == 'done'
    assert [(a['key'], a['value']) for a in body['extraction']['attributes']] == [('name', 'Ada')]


def test_prefer_wait_times_out_with_202(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given no worker running, and the wait's clock virtual (it moves only when the handler sleeps)
    clock = VirtualTime()
    monkeypatch.setattr(write_pipeline, 'time', clock)
    started = clock.now
    # When a write asks to wait up to 1 s for its extraction
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': 'My name is Ada.'}, headers={'Prefer': 'wait=1'})
    # Then it polled for exactly the budget, then answered 202 queued
    assert code == 202 and body['status'] == 'queued', body
    assert clock.now - started == pytest.approx(1.0) and len(clock.naps) > 1
    # And a wait beyond 25 s is refused
    assert api.call('facts', 'POST', '/facts', {'text': 'x'}, headers={'Prefer': 'wait=60'})[0] == 400


def test_preview_extracts_and_persists_nothing(api: Api, store: MemoryStore, worker: Worker) -> None:
    # Given an empty context, When a turn is previewed, Then the diff shows its instruction and fact, nothing changed
    # and no job was sent
    before = snapshot(store)
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'preview', 'text': 'Always answer in bullet points. My name is Sam.'})
    assert code == 200 and body['preview'] is True
    assert [i['description'] for i in body['extraction']['instructions']] == ['Always answer in bullet points']
    assert [(a['key'], a['value']) for a in body['extraction']['attributes']] == [('name', 'Sam')]
    assert snapshot(store) == before and worker.receive() == []


def test_batch_per_message_and_whole_conversation(api: Api, worker: Worker) -> None:
    # Given a three-message batch, When sent per message and as a whole, Then one job per message or one for all is
    # sent, and only the user's directive becomes an instruction
    messages = [{'role': 'user', 'content': 'My name is Sam.'}, {'role': 'assistant', 'content': 'Nice to meet you. Always be kind.'},
                {'role': 'user', 'content': 'Always answer in French.'}]  # fmt: skip
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})
    assert code == 202 and len(body['turnIds']) == 3
    assert len(worker.receive()) == 3  # one job per message
    worker.drain()
    code, whole, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages})
    jobs = worker.receive()
    assert len(jobs) == 1 and json.loads(jobs[0]['Body'])['turnIds'] == whole['turnIds']
    worker.deliver(jobs)
    # the assistant's directive-like text never becomes an instruction (text is untrusted, §12)
    _, state, _ = api.call('views', 'GET', '/state')
    assert [i['description'] for i in state['instructions']] == ['Always answer in French']
    turns = api.call('sessions', 'GET', f'/sessions/{whole["sessionId"]}/turns')[1]['turns']
    assert [(t['seq'], t['role'], t['extraction']) for t in turns] == [(1, 'user', 'done'), (2, 'assistant', 'done'), (3, 'user', 'done')]


def test_reversal_and_restatement_of_instructions(api: Api, worker: Worker) -> None:
    # Given an instruction, its reversal and its restatement, When extracted, Then the instruction is active again with
    # a merge count and the reversal inactive
    session = say(api, 'Always answer in bullet points.')['sessionId']
    say(api, 'Stop using bullet points.', session_id=session)
    say(api, 'always answer in bullet points.', session_id=session)
    worker.drain()
    _, profile, _ = api.call('views', 'GET', '/profile')
    assert [(i['description'], i['mergedCount']) for i in profile['instructions']] == [
        ('Always answer in bullet points', 1), ('Stop using bullet points', 0),
    ]  # fmt: skip


def test_self_correction_is_tentative_until_a_clarification_resolves_it(api: Api, worker: Worker) -> None:
    # Given a self-correction
    session = say(api, "I'm CEO — well, co-CEO, it's complicated.")['sessionId']
    worker.drain()
    _, uncertainty, _ = api.call('views', 'GET', '/uncertainty', query={'resolved': 'false'})
    assert [u['kind'] for u in uncertainty['uncertainties']] == ['self_correction']
    _, entity, _ = api.call('entities', 'GET', '/entities/person/self:admin')
    assert [(a['key'], a['value'], a['tentative']) for a in entity['attributes']] == [('occupation', 'co-CEO', True)]
    assert api.call('views', 'GET', '/state')[1]['unknowns'][0].keys() == {'about', 'reason'}
    # When a later turn states it plainly
    clarification = say(api, "To be clear, I'm co-CEO.", session_id=session)
    worker.drain()
    # Then the uncertainty is resolved by that turn and the attribute is no longer tentative
    _, resolved, _ = api.call('views', 'GET', '/uncertainty', query={'resolved': 'true'})
    assert [u['resolvedBy'] for u in resolved['uncertainties']] == [clarification['turnId']]
    assert api.call('views', 'GET', '/state')[1]['unknowns'] == []
    _, entity, _ = api.call('entities', 'GET', '/entities/person/self:admin')
    assert [(a['key'], a['value'], a['tentative']) for a in entity['attributes']] == [('occupation', 'co-CEO', False)]


def test_a_correction_phrased_otherwise_is_tentative_until_clarified_and_a_vague_anchor_invents_no_date(api: Api, worker: Worker) -> None:
    # Given a correction with words around the first claim and a semicolon before it, and a move dated by an event
    session = say(api, "So I'm the head of design at this point; no wait, design director.")['sessionId']
    say(api, 'I moved to Lisbon right after the wedding.', session_id=session)
    worker.drain()
    _, open_, _ = api.call('views', 'GET', '/uncertainty', query={'resolved': 'false'})
    assert sorted(u['kind'] for u in open_['uncertainties']) == ['self_correction', 'unresolved_time']
    _, entity, _ = api.call('entities', 'GET', '/entities/person/self:admin')
    attributes = {a['key']: a for a in entity['attributes']}
    assert (attributes['occupation']['value'], attributes['occupation']['tentative']) == ('design director', True)
    location = attributes['location']
    assert location['value'] == 'Lisbon' and location['validFrom'] == location['createdAt']  # the known time, no date guessed
    # When the speaker clarifies
    clarification = say(api, 'To clarify: design director.', session_id=session)
    worker.drain()
    # Then that uncertainty is resolved by the clarification and the title is settled
    _, resolved, _ = api.call('views', 'GET', '/uncertainty', query={'resolved': 'true'})
    assert [(u['kind'], u['resolvedBy']) for u in resolved['uncertainties']] == [('self_correction', clarification['turnId'])]
    _, entity, _ = api.call('entities', 'GET', '/entities/person/self:admin')
    assert [(a['value'], a['tentative']) for a in entity['attributes'] if a['key'] == 'occupation'] == [('design director', False)]


def test_explicit_negation_closes_the_fact_and_its_relation(api: Api, worker: Worker) -> None:
    # Given 'I work at Acme' then 'I no longer work at Acme', When both are extracted, Then the employer fact and
    # relation are closed and the history keeps Acme
    session = say(api, 'I work at Acme.')['sessionId']
    worker.drain()
    say(api, 'I no longer work at Acme.', session_id=session)
    worker.drain()
    _, entity, _ = api.call('entities', 'GET', '/entities/person/self:admin')
    assert entity['attributes'] == [] and entity['relations'] == []
    _, history, _ = api.call('entities', 'GET', '/entities/person/self:admin/history/employer')
    assert [(h['value'], h['validUntil'] is not None) for h in history['history']] == [('Acme', True)]


def test_accepting_a_value_settles_a_resolvable_uncertainty(api: Api) -> None:
    # Given a curated value contradicted with low confidence (a resolvable, entity+key uncertainty)
    triple = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'title', 'value': 'VP'}
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [triple]})
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{**triple, 'value': 'CTO', 'confidence': 0.3}]})
    (flag,) = api.call('views', 'GET', '/uncertainty')[1]['uncertainties']
    assert flag['resolvable'] is True
    # When the owner accepts one value
    code, settled, _ = api.call('views', 'POST', f'/uncertainty/{flag["id"].split(":", 1)[1]}/resolve', {'acceptedValue': 'CTO'})
    # Then it is the only live value and the flag is resolved
    assert code == 200 and settled['uncertainty']['resolved'] is True
    _, entity, _ = api.call('entities', 'GET', '/entities/person/alice')
    assert [(a['key'], a['value']) for a in entity['attributes']] == [('title', 'CTO')]
    assert api.call('views', 'POST', '/uncertainty/nope/resolve', {'acceptedValue': 'x'})[0] == 404


def test_an_unresolvable_uncertainty_cannot_be_settled_with_a_value(api: Api, worker: Worker) -> None:
    # Given an unresolved-time uncertainty (nothing to set), When it is resolved with a value, Then it is 422
    say(api, 'I switched to the Pro plan a while ago.')
    worker.drain()
    (flag,) = api.call('views', 'GET', '/uncertainty')[1]['uncertainties']
    assert (flag['kind'], flag['resolvable']) == ('unresolved_time', False)
    code, body, _ = api.call('views', 'POST', f'/uncertainty/{flag["id"].split(":", 1)[1]}/resolve', {'acceptedValue': 'x'})
    assert code == 422


def test_the_hourly_sweep_resends_turns_whose_job_never_reached_the_queue(
    api: Api, store: MemoryStore, worker: Worker, services: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a turn stored while SQS was unreachable (still 202), When the hourly sweep runs an hour later, Then the job
    # is re-sent and the worker extracts it
    from local_runtime.events import LocalContext, schedule_event
    from tests.support.handlers import load_function

    def broken_send(jobs: Any) -> None:
        raise ConnectionError('SQS unreachable')

    monkeypatch.setattr(services.queue, 'send', broken_send)
    body = say(api, 'My name is Grace.')  # still 202: the turn is durable
    monkeypatch.undo()
    assert worker.receive() == []
    store.q('UPDATE type::record("turn", $t) SET enqueued_at = time::now() - 1h, created_at = time::now() - 1h;', t=body['turnId'])
    result = load_function('sweep_hourly').lambda_handler(schedule_event('hourly'), LocalContext())
    assert result['extractionsResent'] >= 1
    worker.drain()
    assert self_facts(api)['name'] == ['Grace']


def test_two_workers_racing_on_one_turn_apply_it_once(api: Api, store: MemoryStore, services: Any, worker: Worker) -> None:
    # Given one queued turn, When three workers process it at once, Then all report done, one decision trace is written
    # and the facts appear once
    from agent_memory.domain.extraction_pipeline import process_turn

    body = say(api, 'I live in Lisbon and I speak Portuguese.')
    before = store.table_counts()
    context = services.control.get_context(api.context_id)
    assert context is not None
    from agent_memory.domain.context_config import effective_config

    config = effective_config(context.config)
    results: list[str] = []
    threads = [threading.Thread(target=lambda: results.append(process_turn(store, services.extractors, services.embedder, config,
                                                                            body['turnId']).status)) for _ in range(3)]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == ['done'] * 3
    after = store.table_counts()
    assert after['decision_trace'] == before['decision_trace'] + 1
    assert self_facts(api) == {'location': ['Lisbon'], 'language': ['Portuguese']}


def test_set_valued_keys_accumulate_instead_of_superseding(api: Api, worker: Worker) -> None:
    # Given two 'I like' turns, When extracted, Then both likes are current (a set-valued key does not supersede)
    session = say(api, 'I like hiking.')['sessionId']
    say(api, 'I like jazz.', session_id=session)
    worker.drain()
    assert sorted(self_facts(api)['likes']) == ['hiking', 'jazz']


def test_doubts_are_recorded_instead_of_guessed(api: Api, worker: Worker) -> None:
    # Given two people in memory, so "he" is ambiguous
    # Given sarcasm, a vague time and an ambiguous 'he', When extracted, Then three uncertainties are recorded and no
    # preference is taken from the sarcasm
    people = [{'entity': {'type': 'person', 'name': n}, 'key': 'team', 'value': 'core'} for n in ('Alice', 'Bob')]
    api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': people})
    session = say(api, 'Yeah right, I *love* Mondays.')['sessionId']
    for text in ('I went to Japan a while ago.', 'He said the deadline moved.'):
        say(api, text, session_id=session)
    worker.drain()
    _, state, _ = api.call('views', 'GET', '/state')
    kinds = sorted(u['kind'] for u in api.call('views', 'GET', '/uncertainty')[1]['uncertainties'])
    assert kinds == ['ambiguous_reference', 'sarcasm', 'unresolved_time']
    assert len(state['unknowns']) == 3
    assert 'likes' not in self_facts(api)  # sarcasm is not a preference


def test_relative_dates_resolve_against_the_spoken_time_and_context_facts_expire(api: Api, worker: Worker) -> None:
    # Given turns spoken on 10 March (long ago), extracted now
    # Given turns spoken long ago with relative dates, When extracted, Then dates resolve against the spoken time, and
    # expiry closes the old context facts
    spoken = '2026-03-10T15:00:00Z'
    say(api, 'I booked a flight to Berlin yesterday.', observed_at=spoken)
    say(api, "I'm working on the Q3 report today.", observed_at=spoken)
    worker.drain()
    # Then "yesterday" is 9 March, and both are context facts known since 10 March
    _, state, _ = api.call('views', 'GET', '/state')
    assert [(a['verb'], a['occurredAt'][:10]) for a in state['context']['actions']] == [('book', '2026-03-09')]
    assert [(a['key'], a['value'], a['createdAt'][:10]) for a in state['context']['attributes']] == [
        ('working_on', 'Q3 report', '2026-03-10')
    ]
    # And the next expiry sweep ends them (their known time is far past the 7-day TTL)
    assert api.call('lifecycle', 'POST', '/lifecycle/expire')[1]['affected'] == 2
    _, state, _ = api.call('views', 'GET', '/state')
    assert state['context']['actions'] == [] and state['context']['attributes'] == []
