"""POST /query, /context, /sessions/{id}/context and /chat (without an LLM) through their handlers (CONTRACT §7)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_reads import TraceReads
from agent_memory.rows.traces import RetrievalTraceRow
from tests.support.db_snapshot import snapshot
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.round_trips import record_round_trips
from tests.support.tuning import tune
from tests.support.worker import Worker

ALICE = {'type': 'person', 'name': 'Alice'}
ACME = {'type': 'organisation', 'name': 'Acme'}


def remember(api: Api, *triples: dict[str, Any], **extra: Any) -> dict[str, Any]:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': list(triples), **extra})
    assert code == 200, body
    return body


def passage(api: Api, text: str, **extra: Any) -> dict[str, Any]:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'none', 'text': text, **extra})
    assert code == 200, body
    return body


def query(api: Api, text: str, **extra: Any) -> dict[str, Any]:
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': text, **extra})
    assert code == 200, body
    return body


def texts(body: dict[str, Any]) -> list[str]:
    return [h['text'] for h in body['hits']]


@pytest.fixture
def world(api: Api) -> Api:
    remember(
        api,
        {'entity': ALICE, 'key': 'role', 'value': 'CTO'},
        {'entity': ALICE, 'key': 'works_at', 'target': ACME},
        {'entity': ACME, 'key': 'headquarters', 'value': 'Berlin'},
        {'entity': ACME, 'key': 'acquired', 'target': {'type': 'organisation', 'name': 'Widgets Ltd'}},
        {'entity': {'type': 'organisation', 'name': 'Widgets Ltd'}, 'key': 'founded', 'value': '1999'},
        {'entity': {'type': 'project', 'name': 'Apollo'}, 'key': 'deadline', 'value': 'March 3rd'},
    )
    passage(api, 'We agreed on Monday that the Apollo launch slips by two weeks.')
    return api


def test_hybrid_query_ranks_the_answer_first_and_reports_its_trace(world: Api, store: MemoryStore) -> None:
    # Given a seeded world, When a hybrid /query asks Alice's role, Then the answer ranks first with its resource, and
    # the stored trace lists exactly the returned hits
    body = query(world, "What is Alice's role?")
    assert body['hits'][0]['text'] == 'Alice role: CTO'
    hit = body['hits'][0]
    assert hit['source'] == 'attribute' and hit['resource'] == {'kind': 'attribute', 'entityType': 'person', 'name': 'Alice', 'key': 'role'}
    assert hit['occurredAt'] and hit['id'].startswith('attribute:')
    assert body['tier'] == 'hybrid' and 'Alice' in body['seedEntities'] and body['queryMs'] > 0
    trace = body['trace']
    assert trace['resolutionTier'] == 'hybrid' and trace['retrievedCount'] >= len(body['hits'])
    row = TraceReads(store).get('retrieval_trace', trace['traceId'].split(':', 1)[1])
    assert isinstance(row, RetrievalTraceRow) and row.tier_entered == 3 and row.endpoint == 'query'
    assert [r['id'] for r in row.returned] == [h['id'] for h in body['hits']]


def test_each_mode_uses_its_own_signal(world: Api) -> None:
    # Given a seeded world, When bm25, vector and graph modes are asked, Then each finds what its own signal reaches
    # (graph: one and two hops from the seed, nearer first)
    bm25 = query(world, 'headquarters', mode='bm25')
    assert texts(bm25)[0] == 'Acme headquarters: Berlin'
    vector = query(world, 'when is the Apollo project due?', mode='vector')
    assert 'Apollo deadline: March 3rd' in texts(vector)[:3]
    # graph: from the seed entity Alice, one hop to Acme and two hops to Widgets Ltd
    graph = query(world, 'Tell me about Alice', mode='graph', k=20)
    found = texts(graph)
    assert 'Alice role: CTO' in found and 'Acme headquarters: Berlin' in found and 'Widgets Ltd founded: 1999' in found
    assert found.index('Alice role: CTO') < found.index('Widgets Ltd founded: 1999')  # nearer first
    assert 'Apollo deadline: March 3rd' not in found


ALICE_FACTS = {'sport': 'tennis', 'editor': 'vim', 'city': 'Lisbon', 'pet': 'a cat named Miso', 'drink': 'green tea', 'car': 'a red Fiat'}


@pytest.mark.parametrize('exact_up_to', [100, 2])
def test_a_seed_with_many_facts_gives_its_facts_among_the_nearest_and_a_small_one_all(
    api: Api, monkeypatch: pytest.MonkeyPatch, exact_up_to: int
) -> None:
    # Given Alice with six facts and others' facts, and seeds read whole up to `exact_up_to` facts (3 nearest facts
    # otherwise)
    remember(api, *({'entity': ALICE, 'key': k, 'value': v} for k, v in ALICE_FACTS.items()))
    remember(api, *({'entity': {'type': 'person', 'name': 'Bob'}, 'key': k, 'value': v} for k, v in ALICE_FACTS.items()))
    tune(monkeypatch, seed_facts_exact=exact_up_to, ef_search=3)
    # When a graph query names Alice
    found = [h['text'] for h in query(api, 'Which sport does Alice play?', mode='graph', k=20)['hits']]
    alice = [t for t in found if t.startswith('Alice ')]
    # Then a seed within the bound gives all its facts; beyond it, only those among the nearest (the asked one first)
    if exact_up_to >= len(ALICE_FACTS):
        assert sorted(alice) == sorted(f'Alice {k}: {v}' for k, v in ALICE_FACTS.items())
    else:
        assert 0 < len(alice) <= 3 and alice[0] == 'Alice sport: tennis'
    assert not any(t.startswith('Bob ') for t in found)


def test_k_and_include_bound_the_response(world: Api) -> None:
    # Given a seeded world, When k, limit and include are set, Then the hit count and the hit sources follow them
    assert len(query(world, 'Acme', k=2)['hits']) == 2
    assert len(query(world, 'Acme', limit=3)['hits']) == 3
    passages = query(world, 'Apollo launch', include=['passages'])
    assert passages['hits'] and {h['source'] for h in passages['hits']} == {'memory_chunk'}
    facts = query(world, 'Apollo launch', include=['facts'])
    assert 'memory_chunk' not in {h['source'] for h in facts['hits']}


@pytest.mark.parametrize(
    'body',
    [
        {'query': 'x', 'k': 51},
        {'query': 'x', 'k': 0},
        {'query': 'x', 'mode': 'fuzzy'},
        {'query': ''},
        {'query': '   '},
        {'query': 'x', 'include': ['documents']},
        {'query': 'x', 'asOf': 'yesterday'},
        {'query': 'x', 'validFrom': '2026-02-01T00:00:00Z', 'validUntil': '2026-01-01T00:00:00Z'},
        {'query': 'x', 'labels': ['_internal=1']},
        {'query': 'x', 'lens': ['a/*/b']},
        {'query': 'x', 'unknown': 1},
    ],
)
def test_bad_query_is_400_and_writes_nothing(world: Api, store: MemoryStore, body: dict[str, Any]) -> None:
    # Given a malformed /query body, When it is sent, Then it is a 400 problem and no table changed
    before = snapshot(store)
    code, problem, headers = world.call('retrieval', 'POST', '/query', body)
    assert code == 400 and problem['status'] == 400 and problem['detail']
    assert snapshot(store) == before


def test_only_current_facts_by_default_and_history_as_of(world: Api) -> None:
    # Given Alice's city changed from Paris to Berlin, When asked now and asOf between the two, Then each sees only the
    # value current then
    remember(world, {'entity': ALICE, 'key': 'city', 'value': 'Paris'})
    between = dt.datetime.now(dt.UTC).isoformat()
    remember(world, {'entity': ALICE, 'key': 'city', 'value': 'Berlin'})
    now_hits = texts(query(world, 'Which city does Alice live in?', k=20))
    assert 'Alice city: Berlin' in now_hits and 'Alice city: Paris' not in now_hits
    then_hits = texts(query(world, 'Which city does Alice live in?', k=20, asOf=between))
    assert 'Alice city: Paris' in then_hits and 'Alice city: Berlin' not in then_hits


def test_valid_time_window_filters_facts(world: Api) -> None:
    # Given Alice's role valid from now, When the query window lies in 2000 or starts then, Then the fact is excluded or
    # included accordingly
    window = {'validFrom': '2000-01-01T00:00:00Z', 'validUntil': '2000-12-31T00:00:00Z'}
    assert [h for h in query(world, 'Alice role', **window)['hits'] if h['source'] == 'attribute'] == []
    assert 'Alice role: CTO' in texts(query(world, 'Alice role', validFrom='2000-01-01T00:00:00Z'))


def test_labels_and_session_filter_passages(world: Api) -> None:
    # Given a labelled passage in its own session, When queried by label and by session, Then only matching passages
    # come back
    labelled = passage(world, 'The Apollo budget review moved to Friday.', labels=['topic=budget'])
    hits = query(world, 'Apollo', labels=['topic=budget'])['hits']
    assert [h['text'] for h in hits] == ['The Apollo budget review moved to Friday.']
    in_session = query(world, 'Apollo', sessionId=labelled['sessionId'])['hits']
    assert {h['resource'].get('sessionId') for h in in_session} == {labelled['sessionId']}


def test_visibility_and_lens(world: Api, services: Services) -> None:
    # Given an outsider with no read on the facts, When it queries, or the admin queries with an out-of-grant lens, Then
    # both get empty hits (not 403), while scope '*' finds them
    outsider = make_principal(services, world.context_id, 'outsider', {'memory:read': ['other/*'], 'memory:write': ['other/*']}, 'other')
    assert query(outsider, "What is Alice's role?")['hits'] == []
    assert query(world, "What is Alice's role?", lens=['nowhere/*'])['hits'] == []  # a lens outside the grant: empty, not 403
    assert query(world, "What is Alice's role?", scope='*')['hits']


def test_returned_facts_are_reinforced_and_inspection_is_not(world: Api, store: MemoryStore) -> None:
    # Given Alice's role at some importance, When inspection routes read it and then /query returns it, Then only the
    # /query reads reinforce it (×1.1 each)
    def importance() -> float:
        return float(store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role';")[0])

    start = importance()
    for route, path in (('views', '/state'), ('views', '/profile'), ('entities', '/entities/person/alice')):
        assert world.call(route, 'GET', path)[0] == 200
    assert importance() == start
    body = query(world, "What is Alice's role?", include=['passages'])  # include narrows the response only
    assert all(h['source'] == 'memory_chunk' for h in body['hits'])
    assert importance() == pytest.approx(start * 1.1)
    query(world, "What is Alice's role?")
    assert importance() == pytest.approx(start * 1.1 * 1.1)


def test_context_block_has_instructions_profile_facts_and_passages(world: Api, worker: Worker) -> None:
    # Given an instruction, facts and passages, When /context is asked, Then the block has the instructions, the
    # relevant facts with dates and the passages
    assert world.call('facts', 'POST', '/facts', {'text': 'Always answer in bullet points.'})[0] == 202
    worker.drain()  # stage 0 stores the instruction
    remember(world, {'entity': {'type': 'person', 'name': 'admin'}, 'key': 'timezone', 'value': 'CET'})
    code, body, _ = world.call('retrieval', 'POST', '/context', {'query': 'When is the Apollo deadline?'})
    assert code == 200 and body['tier'] == 'hybrid'
    block = body['context']
    assert '## Instructions\n- format: Always answer in bullet points' in block
    assert '## Relevant facts' in block and 'Apollo deadline: March 3rd (recorded ' in block
    assert '## Passages' in block and 'Apollo launch slips by two weeks' in block


def test_session_context_adds_recent_turns_and_hides_other_sessions(world: Api, services: Services) -> None:
    # Given a session with two turns, When its context is asked by the owner and by an outsider, Then the owner gets the
    # recent conversation and the outsider is refused
    first = passage(world, 'Let us plan the Apollo retro.')
    passage(world, 'Sure, Thursday works.', sessionId=first['sessionId'], role='assistant')
    code, body, _ = world.call('retrieval', 'POST', f'/sessions/{first["sessionId"]}/context', {'query': 'Apollo'})
    assert code == 200
    assert '## Recent conversation\n- Admin: Let us plan the Apollo retro.\n- assistant: Sure, Thursday works.' in body['context']
    outsider = make_principal(services, world.context_id, 'outsider', {'memory:read': ['other/*'], 'memory:write': ['other/*']}, 'other')
    assert outsider.call('retrieval', 'POST', f'/sessions/{first["sessionId"]}/context', {'query': 'Apollo'})[0] in (403, 404)


def test_chat_without_an_llm_answers_extractively_with_citations(world: Api, store: MemoryStore, worker: Worker) -> None:
    # Given no LLM configured, When /chat asks Alice's role, Then it answers extractively with [S1] citations, and the
    # worker embeds the queued turn's chunk (its statement: a question is no passage)
    code, body, _ = world.call('chat', 'POST', '/chat', {'message': "Alice joined in spring. What is Alice's role?"})
    assert code == 200, body
    assert "Alice's role is CTO [S1]" in body['reply']
    assert body['citations'][0]['marker'] == '[S1]' and body['citations'][0]['snippet'] == 'Alice role: CTO'
    assert body['memoryUpdates']['status'] == 'queued'
    # the queued user turn is extracted by the worker, which also embeds its chunk off the request path
    chunk_id = f'{body["memoryUpdates"]["turnId"]}_0'
    assert store.rows('SELECT VALUE embedding FROM type::record("memory_chunk", $id);', id=chunk_id) == [None]
    worker.drain()
    assert len(store.rows('SELECT VALUE embedding FROM type::record("memory_chunk", $id);', id=chunk_id)[0]) == 384


def test_chat_streams_server_sent_events(world: Api) -> None:
    # Given a seeded world, When /chat streams (by flag or Accept header), Then the frames add up to the reply and the
    # last carries citations and the trace
    for extra, headers in (({'stream': True}, None), ({}, {'accept': 'text/event-stream'})):
        result = world.call_raw(
            'chat', 'POST', '/chat', {'message': "What is Alice's role?", 'bypassCache': True, **extra}, headers=headers
        )
        assert result['statusCode'] == 200 and result['headers']['Content-Type'] == 'text/event-stream'
        frames = [json.loads(f[len('data: ') :]) for f in result['body'].split('\n\n') if f.startswith('data: ')]
        assert frames[-1]['done'] is True and frames[-1]['citations'] and frames[-1]['traceId'].startswith('response_trace:')
        assert ''.join(f['delta'] for f in frames[:-1]) == frames[-1]['reply']
        assert all(f['sessionId'] == frames[-1]['sessionId'] for f in frames)


def test_chat_suppress_markers(world: Api) -> None:
    # Given a seeded world, When /chat asks with suppressMarkers, Then the reply has no [S#] markers but citations still
    # come back
    code, body, _ = world.call('chat', 'POST', '/chat', {'message': "What is Alice's role?", 'suppressMarkers': True})
    assert code == 200 and '[S1]' not in body['reply'] and body['citations']


def test_traces_list_get_stats_and_privacy(world: Api, services: Services) -> None:
    # Given a query and two chats (the second a cache hit), When traces are listed, read and counted, Then pages,
    # parents, stats and bad cursors behave, and an outsider sees none of them
    asked = query(world, "What is Alice's role?")
    code, chat_body, _ = world.call('chat', 'POST', '/chat', {'message': "What is Alice's role?"})
    world.call('chat', 'POST', '/chat', {'message': "What is Alice's role?"})
    code, listing, _ = world.call('traces', 'GET', '/traces', query={'limit': '2'})
    assert code == 200 and len(listing['traces']) == 2 and listing['page']['hasMore'] is True
    newest = listing['traces'][0]
    assert newest['resolutionTier'] == 'cache' and newest['cached'] is True and newest['parent']['reusedFrom'] == chat_body['traceId']
    code, page2, _ = world.call('traces', 'GET', '/traces', query={'limit': '2', 'cursor': listing['page']['nextCursor']})
    assert code == 200 and [t['id'] for t in page2['traces']] == [asked['trace']['traceId']]
    code, detail, _ = world.call('traces', 'GET', f'/traces/{chat_body["traceId"]}')
    assert code == 200 and detail['parent']['id'] == chat_body['traceId'] and len(detail['reusedBy']) == 1
    code, stats, _ = world.call('traces', 'GET', '/traces/stats')
    assert code == 200
    assert stats['cacheHits'] == 1 and stats['responseTracesTotal'] == 2 and stats['cacheHitRate'] == 0.5
    assert stats['tierCounts'] == {'direct': 0, 'cache': 1, 'hybrid': 2} and stats['totalQueries'] == 3
    assert world.call('traces', 'GET', '/traces/stats', query={'windowHours': '0'})[0] == 400
    assert world.call('traces', 'GET', '/traces', query={'cursor': 'not-a-time'})[0] == 400
    outsider = make_principal(services, world.context_id, 'outsider', {'memory:read': ['*']}, 'other')
    assert outsider.call('traces', 'GET', f'/traces/{chat_body["traceId"]}')[0] == 404
    code, theirs, _ = outsider.call('traces', 'GET', '/traces')
    assert code == 200 and theirs['traces'] == []


def test_a_hybrid_query_is_four_round_trips_to_its_context(world: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once the query's words are counted, a hybrid /query asks what passages and facts changed since its process last
    looked (local vectors), reads its lists in one round trip, the seeds' graph, tier 1 and the adjacent turns in a
    third, and writes its trace with the reinforcement in a fourth (one transaction)."""
    # Given a seeded world and a question an earlier query already counted the words of, When it is asked again, Then
    # the context database sees four round trips, the trace is stored and the returned facts are reinforced
    query(world, "What is Alice's role?")
    before = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role' AND value = 'CTO';")[0]
    recorded = record_round_trips(monkeypatch, store.database)
    body = query(world, "What is Alice's role?")
    sent = [trip.sql for trip in recorded]
    if store.db.hosted:  # no copy in the process on a hosted database (the ws test mode): no change poll either
        assert len(sent) == 3 and 'vector_gone' not in sent[0] and 'FROM memory_chunk WHERE embedding <|' in sent[0], sent
    else:
        assert len(sent) == 4, sent
        assert sent[0].startswith('RETURN time::now();') and 'vector_gone' in sent[0] and '$near_memory_chunk' in sent[1]
    assert 'BEGIN TRANSACTION' in sent[-1] and 'CREATE' in sent[-1] and 'UPDATE' in sent[-1]
    assert body['hits'][0]['text'] == 'Alice role: CTO'
    assert TraceReads(store).get('retrieval_trace', body['trace']['traceId'].split(':', 1)[1]) is not None
    after = store.rows("SELECT VALUE importance FROM attribute WHERE key = 'role' AND value = 'CTO';")[0]
    assert after == pytest.approx(min(2.0, before * 1.1))


def test_vector_lists_leave_the_embedding_behind_and_return_what_the_whole_row_returned(
    world: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The KNN hands its neighbours to the visibility filter without their 384 floats (``OMIT embedding``), and the
    lists are exactly the ones the neighbours' whole rows gave."""
    # Given a seeded world and the vector statements a hybrid /query sends, When each is run as sent and with the
    # neighbours' whole rows, Then both return the same rows in the same order and no neighbour carried its embedding
    tune(monkeypatch, local_vectors_max_rows=0)  # the KNN runs in the database
    recorded = record_round_trips(monkeypatch, store.database)
    query(world, 'When does the Apollo launch happen?')
    sent = next(trip for trip in recorded if '<|' in trip.sql)
    statements = [line for line in sent.sql.split('\n') if '<|' in line]
    assert len(statements) == 3, statements
    for statement in statements:
        knn = statement.split(' FROM (', 1)[1].split(') WHERE distance', 1)[0]
        neighbours = store.rows(f'{knn};', **(sent.params or {}))
        assert neighbours and all('embedding' not in row and 'distance' in row for row in neighbours)
        whole_rows = statement.replace(' OMIT embedding', '')
        assert store.q(statement, **(sent.params or {})) == store.q(whole_rows, **(sent.params or {}))
    assert any(store.q(s, **(sent.params or {}))[0] for s in statements)
