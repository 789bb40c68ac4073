"""A worker that died mid-attempt leaves its turn ``running`` with no redelivery coming: the hourly sweep re-sends it."""

from __future__ import annotations

from typing import Any

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.turn_store import TurnStore
from local_runtime.events import LocalContext, schedule_event
from tests.support.extraction import say, self_facts
from tests.support.handlers import Api, load_function
from tests.support.worker import Worker


def test_the_hourly_sweep_resends_a_turn_whose_worker_died_mid_attempt(api: Api, store: MemoryStore, worker: Worker) -> None:
    # Given a turn whose worker started its attempt (status running) and then died with the message lost
    body = say(api, 'My name is Ada.')
    messages = worker.receive()
    assert len(messages) == 1
    TurnStore(store).start_job([body['turnId']])
    worker.sqs.delete_message(QueueUrl=worker.queue_url, ReceiptHandle=messages[0]['ReceiptHandle'])
    store.q('UPDATE type::record("turn", $t) SET enqueued_at = time::now() - 1h, created_at = time::now() - 1h;', t=body['turnId'])
    assert api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]['status'] == 'running'
    # When the hourly sweep runs and the worker drains the queue
    result: dict[str, Any] = load_function('sweep_hourly').lambda_handler(schedule_event('hourly'), LocalContext())
    worker.drain()
    # Then the turn was re-sent and extracted once
    assert result['extractionsResent'] == 1
    assert api.call('facts', 'GET', f'/extractions/{body["turnId"]}')[1]['status'] == 'done'
    assert self_facts(api)['name'] == ['Ada']


def test_the_hourly_sweep_leaves_a_recent_running_turn_alone(api: Api, store: MemoryStore, worker: Worker) -> None:
    # Given a turn a live worker is extracting right now
    body = say(api, 'My name is Alan.')
    TurnStore(store).start_job([body['turnId']])
    # When the hourly sweep runs
    result: dict[str, Any] = load_function('sweep_hourly').lambda_handler(schedule_event('hourly'), LocalContext())
    # Then it does not send a second job for it
    assert result['extractionsResent'] == 0
    assert len(worker.receive()) == 1
