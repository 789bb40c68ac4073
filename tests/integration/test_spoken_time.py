"""Passages carry the time they were spoken (the message's ``ts`` / ``observed_at``), not the time they were stored:
in /query hits, /context lines and the retrieval trace (CONTRACT §6.1, issue 11)."""

from __future__ import annotations

from tests.support.handlers import Api
from tests.support.worker import Worker

SPOKEN = '2023-05-08T13:56:00Z'


def test_batch_passage_hits_context_and_trace_show_the_spoken_time(api: Api) -> None:
    # Given a batch message spoken in 2023, When it is queried, traced and put in context, Then each shows the spoken
    # time, not the write time
    messages = [
        {'role': 'user', 'content': 'Caroline: I went to the pottery workshop with my cousin.', 'ts': SPOKEN},
        {'role': 'user', 'content': 'Melanie: That sounds lovely, what did you make?', 'ts': SPOKEN},
    ]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'none'})
    assert code == 200, body

    code, found, _ = api.call('retrieval', 'POST', '/query', {'query': 'pottery workshop', 'include': ['passages']})
    assert code == 200 and found['hits']
    top = found['hits'][0]
    assert 'pottery workshop' in top['text'] and top['occurredAt'].startswith('2023-05-08T13:56:00')

    code, trace, _ = api.call('traces', 'GET', f'/traces/{found["trace"]["traceId"]}')
    assert code == 200
    returned = trace['retrievals'][0]['returned']
    assert returned[0]['id'] == top['id'] and returned[0]['occurredAt'].startswith('2023-05-08T13:56:00')

    code, block, _ = api.call('retrieval', 'POST', '/context', {'query': 'pottery workshop'})
    assert code == 200
    assert '- (2023-05-08, Admin) Caroline: I went to the pottery workshop with my cousin.' in block['context']


def test_single_turn_passage_uses_observed_at(api: Api) -> None:
    # Given a single turn with observed_at, When it is queried, Then its passage's time is observed_at
    body = {'infer': 'none', 'text': 'The quarterly review moved to the harbour office.', 'observed_at': '2022-01-21T19:31:00Z'}
    code, stored, _ = api.call('facts', 'POST', '/facts', body)
    assert code == 200, stored
    code, found, _ = api.call('retrieval', 'POST', '/query', {'query': 'quarterly review harbour office', 'include': ['passages']})
    assert code == 200 and found['hits'][0]['occurredAt'].startswith('2022-01-21T19:31:00')


def test_relative_dates_in_a_batch_resolve_against_each_message_ts(api: Api, worker: Worker) -> None:
    # Given batch messages with relative dates and their own ts, When extracted, Then each date resolves against its
    # message's ts
    messages = [
        {'role': 'user', 'content': 'I booked a flight to Berlin two weeks ago.', 'ts': SPOKEN},
        {'role': 'user', 'content': 'I booked a table at the harbour cafe yesterday.', 'ts': '2023-06-01T09:00:00Z'},
    ]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'infer': 'full'})
    assert code == 202, body
    worker.drain()
    _, state, _ = api.call('views', 'GET', '/state')
    booked = sorted(a['occurredAt'][:10] for a in state['context']['actions'] if a['verb'] == 'book')
    assert booked == ['2023-04-24', '2023-05-31']
