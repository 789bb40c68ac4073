"""Local text search (db/local_text.py): the passages' and facts' text lists ranked by BM25 in the process, on the
rows local vector search holds, scored as the database scores them and filtered by the database like every list
(docs/architecture.md, "Local text search")."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.local_vectors import LocalVectors, local_vectors_of
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import rid
from agent_memory.db.retrieval_store import RetrievalStore
from agent_memory.domain.retrieval import query_terms
from agent_memory.rows.reads import ListLookup, ReadFilter
from tests.integration.test_local_vectors import TABLES, call, chunk_of, note, process_that_looked, vector_of
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.round_trips import record_round_trips
from tests.support.tuning import tune

LIMITS = {'attribute': 32, 'memory_chunk': 32, 'entity': 16}
PASSAGES = [
    'Maya booked the flights to Lisbon for the April conference.',
    'The Lisbon conference badge pickup is at the north entrance.',
    'Maya says the conference hotel in Lisbon has a rooftop pool and a pool bar, the best pool in town.',
    'Tom prefers the window seat on long flights.',
    'The quarterly budget review moved to Thursday afternoon.',
    'Budget numbers for the review: travel is over by twelve percent.',
    "Ana's dog Biscuit chewed the budget printout.",
    'Tom and Maya will share a taxi from the airport.',
    'Rooftop dinner on Friday, if the weather holds.',
    'The airport taxi rank is closed for works; use the metro.',
]
QUESTIONS = [
    'Which hotel in Lisbon has a pool?',
    'When is the budget review?',
    'Who booked flights for the conference?',
    'How do we get from the airport?',
    'What did Biscuit chew?',
]


@pytest.fixture
def texts(api: Api) -> Api:
    for text in PASSAGES:
        note(api, text)
    call(api, 'facts', '/facts', {
        'infer': 'triples',
        'triples': [
            {'entity': {'type': 'person', 'name': 'Maya'}, 'key': 'hotel', 'value': 'Lisbon Rooftop Pool Hotel'},
            {'entity': {'type': 'person', 'name': 'Tom'}, 'key': 'seat', 'value': 'window seat'},
        ],
    })  # fmt: skip
    return api


def text_lists(store: MemoryStore, question: str, patterns: list[str] | None = None) -> dict[str, list[tuple[str, float]]]:
    found = RetrievalStore(store).lists(
        ReadFilter(patterns=patterns or ['*'], now=utcnow()),
        LIMITS,
        ListLookup(vector=vector_of(store, chunk_of(store, PASSAGES[0])), terms=query_terms(question)),
    )
    return {table: [(row.ref, round(row.bm25 or 0.0, 9)) for row in rows] for table, rows in found.text.items()}


def test_the_text_lists_ranked_in_the_process_hold_the_rows_and_scores_the_database_gives(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given passages and facts of different lengths and word counts, and questions naming an entity
    questions = [*QUESTIONS, 'What seat does Tom like?']
    text_lists(store, 'warm up')  # the process reads the rows
    assert local_vectors_of(store, 384).sizes() == {'attribute': 2, 'memory_chunk': 10, 'entity': 2}
    recorded = record_round_trips(monkeypatch, store.database)
    # When each question's text lists are ranked in the process and by the database's full-text indexes
    here = {q: text_lists(store, q) for q in questions}
    sent = '\n'.join(trip.sql for trip in recorded)
    tune(monkeypatch, local_vectors_max_rows=0, local_text_max_rows=0)
    there = {q: text_lists(store, q) for q in questions}
    tune(monkeypatch, local_vectors_max_rows=20_000, local_text=False)  # vectors here, texts in the database
    recorded.clear()
    assert {q: text_lists(store, q) for q in questions} == there
    assert not any('$lex_' in trip.sql for trip in recorded) and any('$near_' in trip.sql for trip in recorded)
    # Then the process sent no full-text match for passages, facts or entities' names, and both give the same rows with
    # the same scores
    assert '$lex_memory_chunk' in sent and '$lex_attribute' in sent and '$lex_entity' in sent
    assert 'text @' not in sent and 'name @' not in sent
    for question in questions:
        for table in ('memory_chunk', 'attribute', 'entity'):
            assert [r for r, _ in here[question][table]] == [r for r, _ in there[question][table]], (question, table)
            assert [s for _, s in here[question][table]] == pytest.approx([s for _, s in there[question][table]], rel=1e-6)
    assert here['Which hotel in Lisbon has a pool?']['memory_chunk'][0][0] == f'memory_chunk:{chunk_of(store, PASSAGES[2])}'
    assert any(here[q]['attribute'] for q in questions) and here['What seat does Tom like?']['entity']


def test_a_passage_the_caller_may_not_see_is_ranked_but_never_read(
    services: Services, context_id: str, texts: Api, store: MemoryStore
) -> None:
    # Given a private passage that matches the question best, and a caller who reads only the team's region
    note(texts, 'The Lisbon hotel pool code is 7731, keep it private.', scopes=[['/private']])
    secret = f'memory_chunk:{chunk_of(store, "The Lisbon hotel pool code is 7731, keep it private.")}'
    make_principal(services, context_id, 'bob', {'memory:read': ['/team/*'], 'memory:write': ['/team/*']}, '/team/bob')
    # When the admin and Bob search the same words in the process, Then only the admin's list holds it
    assert text_lists(store, 'What is the Lisbon hotel pool code?')['memory_chunk'][0][0] == secret
    assert local_vectors_of(store, 384).sizes()['memory_chunk'] == 11
    bobs = text_lists(store, 'What is the Lisbon hotel pool code?', ['/team/*'])
    assert secret not in [r for r, _ in bobs['memory_chunk']]


def test_an_entity_the_caller_may_not_see_is_ranked_but_never_read(
    services: Services, context_id: str, texts: Api, store: MemoryStore
) -> None:
    # Given a private entity whose name matches the question, and a caller who reads only the team's region
    call(texts, 'facts', '/facts', {
        'infer': 'triples', 'scopes': [['/private']],
        'triples': [{'entity': {'type': 'person', 'name': 'Zelda Quill'}, 'key': 'badge', 'value': 'red'}],
    })  # fmt: skip
    make_principal(services, context_id, 'bob', {'memory:read': ['/team/*'], 'memory:write': ['/team/*']}, '/team/bob')
    # When the admin and Bob search the name in the process, Then both lists are ranked here and only the admin's holds it
    assert 'entity:person/zelda quill' in [r for r, _ in text_lists(store, 'Who is Zelda Quill?')['entity']]
    assert local_vectors_of(store, 384).sizes()['entity'] == 3
    assert 'entity:person/zelda quill' not in [r for r, _ in text_lists(store, 'Who is Zelda Quill?', ['/team/*'])['entity']]


def test_another_process_ranks_text_written_without_a_vector_and_forgets_deleted_text(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that read the rows, and a passage stored by another process without its embedding
    other = process_that_looked(store, monkeypatch)
    row = store.rows('SELECT * OMIT embedding FROM type::record("memory_chunk", $k);', k=chunk_of(store, PASSAGES[3]))[0]
    del row['id']
    store.q('CREATE memory_chunk:bare_0 CONTENT $row;', row={**row, 'text': 'Zanzibar ferry tickets are in the blue folder.'})
    # When the next look runs, Then its text is ranked though it has no vector
    assert other.ready(store, TABLES, ['zanzibar', 'ferry']) == dict.fromkeys(TABLES, True)
    assert other.rows()['memory_chunk'] == 10 and other.sizes()['memory_chunk'] == 11
    assert ranked(other, ['zanzibar', 'ferry'])[0][0] == 'bare_0'
    # When it and a passage with a vector are deleted, Then the next look drops both texts
    review = chunk_of(store, PASSAGES[4])
    other.ready(store, TABLES, ['quarterly', 'budget'])
    assert ranked(other, ['quarterly', 'budget'])[0][0] == review
    store.q('DELETE memory_chunk:bare_0;')
    store.q('DELETE type::record("memory_chunk", $k);', k=review)
    other.ready(store, TABLES)
    assert other.sizes()['memory_chunk'] == 9
    assert ranked(other, ['zanzibar', 'ferry']) == []
    assert review not in [key for key, _ in ranked(other, ['quarterly', 'budget'])]


def both_lists(store: MemoryStore, question: str) -> tuple[dict[str, list[tuple[str, float]]], dict[str, list[str]]]:
    """The text lists (row, score) and the vector lists (rows) of ``question``, searched near the first passage."""
    found = RetrievalStore(store).lists(
        ReadFilter(patterns=['*'], now=utcnow()),
        LIMITS,
        ListLookup(vector=vector_of(store, chunk_of(store, PASSAGES[0])), terms=query_terms(question)),
    )
    texts = {table: [(row.ref, round(row.bm25 or 0.0, 9)) for row in rows] for table, rows in found.text.items()}
    return texts, {table: [row.ref for row in rows] for table, rows in found.vector.items()}


def test_a_table_over_the_vector_limit_holds_its_texts_only_and_its_knn_runs_in_the_database(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a vector limit of 5 rows: the 10 passages are over it, the 2 facts and 2 entities under it
    tune(monkeypatch, local_vectors_max_rows=5)
    both_lists(store, 'warm up')
    held = local_vectors_of(store, 384)
    # Then the process holds the passages' texts without their vectors, and the facts' and entities' texts and vectors
    assert held.rows() == {'attribute': 2, 'memory_chunk': 0, 'entity': 2}
    assert held.sizes() == {'attribute': 2, 'memory_chunk': 10, 'entity': 2}
    assert held.weights() == {'attribute': 4, 'memory_chunk': 10, 'entity': 4}
    # When each question's lists are found, Then the passages' words are ranked here and their KNN in the database,
    # the facts' both here, and every list holds what the database's indexes give (the texts with the same scores)
    recorded = record_round_trips(monkeypatch, store.database)
    here = {q: both_lists(store, q) for q in QUESTIONS}
    sent = '\n'.join(trip.sql for trip in recorded)
    assert '$lex_memory_chunk' in sent and 'FROM memory_chunk WHERE embedding <|' in sent and '$near_attribute' in sent
    assert '$near_memory_chunk' not in sent and '@1@ $memory_chunk_1' not in sent
    tune(monkeypatch, local_vectors_max_rows=0, local_text_max_rows=0)
    there = {q: both_lists(store, q) for q in QUESTIONS}
    for question in QUESTIONS:
        (text, vector), (db_text, db_vector) = here[question], there[question]
        assert vector['memory_chunk'] == db_vector['memory_chunk'], question  # (facts ranked here skip those under the floor)
        for table in text:
            assert [r for r, _ in text[table]] == [r for r, _ in db_text[table]], (question, table)
            assert [s for _, s in text[table]] == pytest.approx([s for _, s in db_text[table]], rel=1e-6)
    assert any(rows for text, _ in here.values() for rows in text.values())


def test_a_table_that_outgrows_the_vector_limit_keeps_its_texts_and_reads_each_text_once(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process holding the passages' vectors and texts
    both_lists(store, 'warm up')
    held = local_vectors_of(store, 384)
    assert held.rows()['memory_chunk'] == 10
    # When the passages outgrow the vector limit, Then the next look drops their vectors and reads the new text only
    tune(monkeypatch, local_vectors_max_rows=10, local_vectors_verify_seconds=0.0)
    note(texts, 'The Zanzibar ferry leaves the harbour at noon.')
    ferry = f'memory_chunk:{chunk_of(store, "The Zanzibar ferry leaves the harbour at noon.")}'
    recorded = record_round_trips(monkeypatch, store.database)
    text, vector = both_lists(store, 'When does the Zanzibar ferry leave?')
    assert held.rows()['memory_chunk'] == 0 and held.sizes()['memory_chunk'] == 11
    assert text['memory_chunk'][0][0] == ferry and ferry in vector['memory_chunk']
    assert not any('$fetch' in trip.sql and trip.params and trip.params.get('fetch') for trip in recorded)
    # When later looks list the rows written lately again (every look verifies here), Then no text is read twice
    recorded.clear()
    both_lists(store, 'Who booked flights for the conference?')
    assert any('written_at >= $since_memory_chunk' in trip.sql for trip in recorded)
    assert not any('$texts_memory_chunk' in trip.sql for trip in recorded)


def test_a_texts_only_table_new_to_the_process_is_scanned_in_key_order_in_larger_chunks_than_a_table_holding_vectors(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given the 10 passages over a vector limit of 5 (texts only) and the facts under it, a vector table read 1 row a
    # look and a texts-only one 4 rows a look
    tune(monkeypatch, local_vectors_max_rows=5, local_vectors_load_rows=1, local_text_load_rows=4)
    held = local_vectors_of(store, 384)
    # When a query's look reads them, Then each look reads 4 passages' texts, in key order from where the last stopped,
    # and 1 fact: the passages are whole after 3 looks, and their word list runs in the database until then
    recorded = record_round_trips(monkeypatch, store.database)
    for sizes, passages_here in (({'memory_chunk': 4, 'attribute': 1}, False), ({'memory_chunk': 8, 'attribute': 2}, False),
                                 ({'memory_chunk': 10, 'attribute': 2}, True)):  # fmt: skip
        recorded.clear()
        both_lists(store, 'Which hotel in Lisbon has a pool?')
        assert {t: held.sizes()[t] for t in sizes} == sizes
        assert any('$lex_memory_chunk' in trip.sql for trip in recorded) is passages_here
        assert any('FROM memory_chunk_lean' in trip.sql and 'LIMIT 4;' in trip.sql for trip in recorded)
    assert held.rows() == {'attribute': 2, 'memory_chunk': 0, 'entity': 2}
    assert set(held._tables['memory_chunk'].text._lengths) == {chunk_of(store, text) for text in PASSAGES}


def test_a_scan_of_a_texts_only_table_misses_no_row_written_and_holds_no_row_deleted_while_it_runs(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process scanning the 10 passages' texts 3 a look, that has read the first 3
    tune(monkeypatch, local_vectors_max_rows=5, local_text_load_rows=3, local_vectors_verify_seconds=3600.0)
    both_lists(store, 'warm up')
    held = local_vectors_of(store, 384)
    scanned = set(held._tables['memory_chunk'].text._lengths)
    assert len(scanned) == 3
    # When a passage not yet scanned is deleted and new passages are written meanwhile, one of them behind the scan
    # (ids are time-ordered, so the scan is moved past it: as a key that sorts before the scan's position would be)
    keys = [chunk_of(store, text) for text in PASSAGES]
    deleted = next(key for key in sorted(keys) if key not in scanned)
    store.q('DELETE type::record("memory_chunk", $k);', k=deleted)
    new = ['The Zanzibar ferry leaves the harbour at noon.', 'Aardvark Street market opens on Sundays.']
    note(texts, new[0])
    scan = held._tables['memory_chunk']
    scan.scanned_to = rid('memory_chunk_lean', chunk_of(store, new[0]))  # the scan ends; what it skipped is read by ids
    note(texts, new[1])
    # Then once whole, the process holds every passage there is (texts as the database analyses them), and its word
    # lists rank them here
    for _ in range(8):
        both_lists(store, 'warm up')
    there = {*keys, *(chunk_of(store, text) for text in new)} - {deleted}
    assert set(held._tables['memory_chunk'].text._lengths) == there and len(there) == 11
    recorded = record_round_trips(monkeypatch, store.database)
    text, _ = both_lists(store, 'When does the Zanzibar ferry leave?')
    assert '$lex_memory_chunk' in '\n'.join(trip.sql for trip in recorded)
    assert text['memory_chunk'][0][0] == f'memory_chunk:{chunk_of(store, new[0])}'


def ranked(held: LocalVectors, words: list[str]) -> list[tuple[str, Any]]:
    from agent_memory.db.local_text import ANALYSED

    analysed = ANALYSED.known(words)
    assert len(analysed) == len(words)
    return held.text_search('memory_chunk', analysed, lambda df, rows: [(w,) for w in words], 10) or []


def test_a_search_by_words_alone_uses_the_rows_a_search_by_meaning_made_the_process_hold(
    texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a process that has not searched by meaning, When a bm25 query runs, Then the database ranks the words
    recorded = record_round_trips(monkeypatch, store.database)
    first = call(texts, 'retrieval', '/query', {'query': 'When is the budget review?', 'k': 5, 'mode': 'bm25'})['hits']
    assert any('@1@' in trip.sql for trip in recorded) and not any('$lex_' in trip.sql for trip in recorded)
    # When a hybrid query made it hold the rows, Then the next bm25 query ranks them here and finds the same passages
    call(texts, 'retrieval', '/query', {'query': 'When is the budget review?', 'k': 5, 'mode': 'hybrid'})
    recorded.clear()
    again = call(texts, 'retrieval', '/query', {'query': 'When is the budget review?', 'k': 5, 'mode': 'bm25'})['hits']
    assert any('$lex_memory_chunk' in trip.sql for trip in recorded)
    assert {h['id'] for h in again} == {h['id'] for h in first} and len(first) >= 2


def test_common_words_are_planned_as_the_database_plans_them(texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a document-frequency cap of 2 rows, so that "lisbon", "conference" or "budget" are common here (a word in
    # half the rows or more scores nothing; common ones are searched for only together)
    tune(monkeypatch, df_cap=2)
    text_lists(store, 'warm up')
    questions = [*QUESTIONS, 'Lisbon conference', 'Maya Lisbon pool', 'the budget']
    # When the lists are ranked in the process and by the database, Then they hold the same rows
    here = {q: text_lists(store, q) for q in questions}
    tune(monkeypatch, local_vectors_max_rows=0, local_text_max_rows=0)
    there = {q: text_lists(store, q) for q in questions}
    for question in questions:
        for table in ('memory_chunk', 'attribute'):
            assert {r for r, _ in here[question][table]} == {r for r, _ in there[question][table]}, (question, table)
    lisbon = {r for r, _ in here['Lisbon conference']['memory_chunk']}
    assert lisbon == {f'memory_chunk:{chunk_of(store, p)}' for p in PASSAGES[:3]}  # both words, ANDed


def test_a_caller_whose_best_matches_are_hidden_still_gets_the_best_rows_it_may_read(
    services: Services, context_id: str, texts: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given 60 private passages that match the question better than any the team may read
    for i in range(60):
        note(texts, f'Private: the Lisbon hotel pool code {i} is stored with the Lisbon pool keys.', scopes=[['/private']])
    bob = make_principal(services, context_id, 'bob', {'memory:read': ['/team/*'], 'memory:write': ['/team/*']}, '/team/bob')
    note(bob, 'Bob left the Lisbon pool towels at the front desk.')
    towels = f'memory_chunk:{chunk_of(store, "Bob left the Lisbon pool towels at the front desk.")}'
    text_lists(store, 'warm up')
    question = 'Where is the Lisbon pool?'
    # When Bob's text list is ranked in the process and by the database, Then both hold the rows he may read, in order
    recorded = record_round_trips(monkeypatch, store.database)
    here = text_lists(store, question, ['/team/*'])['memory_chunk']
    assert any('$more_memory_chunk' in trip.sql for trip in recorded)  # the first 48 candidates were all hidden
    tune(monkeypatch, local_vectors_max_rows=0, local_text_max_rows=0)
    there = text_lists(store, question, ['/team/*'])['memory_chunk']
    assert [r for r, _ in here] == [r for r, _ in there] and towels in [r for r, _ in here]


def test_hostile_query_words_are_ranked_by_the_database_and_change_nothing(texts: Api, store: MemoryStore) -> None:
    # Given a process that ranks the texts, When a question holds a 4,000-character word, unicode and regex-like text
    call(texts, 'retrieval', '/query', {'query': 'warm up', 'k': 5})
    for question in ['budget ' + 'pool' * 1000, 'budget ' + 'ß' * 4000, 'pool (a+)+$ .* \\\\ %', 'Lisbon 🏊 pööl ' * 200]:
        found = call(texts, 'retrieval', '/query', {'query': question[:4096], 'k': 5})
        # Then the query answers, the long word is not remembered, and the held rows are unchanged
        assert isinstance(found['hits'], list)
    assert local_vectors_of(store, 384).sizes() == {'attribute': 2, 'memory_chunk': 10, 'entity': 2}
    from agent_memory.db.local_text import ANALYSED, REMEMBERED_CHARS

    assert all(len(word) <= REMEMBERED_CHARS for word in ANALYSED._words)
