"""Ranking rules of /query on the real engine (issue 11): a lexical list that ranks by its selective terms, and
adjacent turns of the best passages joining the ranking — never beyond what the caller may see."""

from __future__ import annotations

from typing import Any

from agent_memory.api.services import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.retrieval_store import DF_CAP, ReadFilter, RetrievalStore
from agent_memory.domain.ids import utcnow
from tests.conftest import Api
from tests.integration.test_visibility_matrix import make_principal

FILLER = ['the weather', 'a long walk', 'the new cafe', 'her sister', 'the weekend', 'a podcast', 'the garden', 'work']


def batch(api: Api, contents: list[str], **extra: Any) -> dict[str, Any]:
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'content': c} for c in contents], 'infer': 'none', **extra})
    assert code == 200, body
    return body


def answer_in(api: Api, session_id: str, **extra: Any) -> None:
    """The reply to the puppy question, written as the next turn of its session with its own scopes or labels."""
    body = {'infer': 'none', 'text': 'Caroline: Biscuit, after grandma.', 'sessionId': session_id, **extra}
    code, body, _ = api.call('facts', 'POST', '/facts', body)
    assert code == 200, body


def ids(body: dict[str, Any]) -> list[str]:
    return [h['text'] for h in body['hits']]


def test_bm25_ranks_a_selective_term_over_a_name_in_every_row(api: Api) -> None:
    """Every row names the speaker (a term in all rows scores 0 on 3.2); the one row with the rare word must lead,
    however late it was written (an AND of all words finds nothing here, and the name alone ranks in write order)."""
    chatter = [f'Caroline: I talked about {FILLER[i % len(FILLER)]} number {i} today.' for i in range(40)]
    batch(api, [*chatter, 'Caroline: I finished the lighthouse sketch yesterday.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Did Caroline mention the lighthouse painting?', 'mode': 'bm25'})
    assert code == 200
    assert ids(body)[0] == 'Caroline: I finished the lighthouse sketch yesterday.'
    assert len(body['hits']) == 1  # rows matching only the everywhere-name are no lexical evidence


def test_the_reply_after_a_matching_question_joins_the_hybrid_ranking(api: Api, store: MemoryStore) -> None:
    chatter = [f'Melanie: We chatted about {FILLER[i % len(FILLER)]} again.' for i in range(12)]
    batch(api, [*chatter, 'Melanie: What did you end up calling the new puppy?', 'Caroline: Biscuit, after grandma.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?', 'k': 5})
    assert code == 200
    texts = ids(body)
    assert 'Caroline: Biscuit, after grandma.' in texts
    trace = store.get_trace('retrieval_trace', body['trace']['traceId'].split(':', 1)[1])
    assert trace is not None
    lists = {c['id']: c['lists'] for c in trace['candidates']}
    reply = next(h['id'] for h in body['hits'] if h['text'] == 'Caroline: Biscuit, after grandma.')
    assert 'adjacent' in lists[reply]


def test_an_adjacent_turn_outside_the_read_grant_never_joins(api: Api, services: Services) -> None:
    first = batch(api, ['Melanie: What did you end up calling the new puppy?'], scopes=[['team/a']])
    answer_in(api, first['sessionId'], scopes=[['team/b']])
    reader = make_principal(services, api.context_id, 'reader', {'memory:read': ['team/a/*']}, 'team/a')
    code, found, _ = reader.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?'})
    assert code == 200
    assert ids(found) == ['Melanie: What did you end up calling the new puppy?']
    code, everything, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?'})
    assert 'Caroline: Biscuit, after grandma.' in ids(everything)  # the admin sees both: the filter, not absence, hid it


def test_an_adjacent_turn_outside_the_requested_labels_never_joins(api: Api) -> None:
    first = batch(api, ['Melanie: What did you end up calling the new puppy?'], labels=['topic=pets'])
    answer_in(api, first['sessionId'], labels=['topic=names'])
    code, found, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?', 'labels': ['topic=pets']})
    assert code == 200 and ids(found) == ['Melanie: What did you end up calling the new puppy?']


def test_terms_in_more_rows_than_the_cap_are_left_out_of_the_or(api: Api, store: MemoryStore) -> None:
    """A term in more than ``DF_CAP`` rows would cost a scan of all of them and rank nothing: it is dropped; when
    every term is that common, the list falls back to their intersection."""
    notes = [f'Caroline: note {i}' for i in range(DF_CAP + 4)]
    for start in range(0, len(notes), 100):
        batch(api, notes[start : start + 100])
    batch(api, ['Caroline: the lighthouse sketch is done.'])
    db = RetrievalStore(store)
    assert db.selective('memory_chunk', ['caroline', 'lighthouse', 'note']) == ['lighthouse']
    rows = db.text('memory_chunk', ['caroline', 'note'], 5, ReadFilter(['*'], utcnow()))
    assert len(rows) == 5 and all(r['text'].startswith('Caroline: note ') for r in rows)
