"""Ranking rules of /query on the real engine (issue 11): a lexical list that ranks by its selective terms, and
adjacent turns of the best passages joining the ranking — never beyond what the caller may see."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.retrieval_store import ROWS, RetrievalStore, TermPlan, plan_terms, scoreless
from agent_memory.db.term_frequencies import TermFrequencies
from agent_memory.db.trace_reads import TraceReads
from agent_memory.rows.reads import ReadFilter
from agent_memory.rows.traces import RetrievalTraceRow
from agent_memory.tuning import TUNING
from tests.support.handlers import Api
from tests.support.principals import make_principal
from tests.support.tuning import tune
from tests.support.worker import Worker

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
    # Given a name in every row and one row with a rare term, When BM25 ranks a query with both, Then the rare term's
    # row is the only hit
    chatter = [f'Caroline: I talked about {FILLER[i % len(FILLER)]} number {i} today.' for i in range(40)]
    batch(api, [*chatter, 'Caroline: I finished the lighthouse sketch yesterday.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Did Caroline mention the lighthouse painting?', 'mode': 'bm25'})
    assert code == 200
    assert ids(body)[0] == 'Caroline: I finished the lighthouse sketch yesterday.'
    assert len(body['hits']) == 1  # rows matching only the everywhere-name are no lexical evidence


def test_the_reply_after_a_matching_question_joins_the_hybrid_ranking(api: Api, store: MemoryStore) -> None:
    # Given a question turn that matches and its reply that does not, When hybrid ranks, Then the reply joins through
    # the adjacency list
    chatter = [f'Melanie: We chatted about {FILLER[i % len(FILLER)]} again.' for i in range(12)]
    batch(api, [*chatter, 'Melanie: What did you end up calling the new puppy?', 'Caroline: Biscuit, after grandma.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?', 'k': 5})
    assert code == 200
    texts = ids(body)
    assert 'Caroline: Biscuit, after grandma.' in texts
    trace = TraceReads(store).get('retrieval_trace', body['trace']['traceId'].split(':', 1)[1])
    assert isinstance(trace, RetrievalTraceRow)
    lists = {c['id']: c['lists'] for c in trace.candidates}
    reply = next(h['id'] for h in body['hits'] if h['text'] == 'Caroline: Biscuit, after grandma.')
    assert 'adjacent' in lists[reply]


def test_an_adjacent_turn_outside_the_read_grant_never_joins(api: Api, services: Services) -> None:
    # Given a reply outside a reader's grant next to a matching question, When the reader queries, Then only the
    # question comes back (the admin sees both)
    first = batch(api, ['Melanie: What did you end up calling the new puppy?'], scopes=[['team/a']])
    answer_in(api, first['sessionId'], scopes=[['team/b']])
    reader = make_principal(services, api.context_id, 'reader', {'memory:read': ['team/a/*']}, 'team/a')
    code, found, _ = reader.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?'})
    assert code == 200
    assert ids(found) == ['Melanie: What did you end up calling the new puppy?']
    code, everything, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?'})
    assert 'Caroline: Biscuit, after grandma.' in ids(everything)  # the admin sees both: the filter, not absence, hid it


def test_an_adjacent_turn_outside_the_requested_labels_never_joins(api: Api) -> None:
    # Given a reply without the requested labels, When the labelled query runs, Then only the question comes back
    first = batch(api, ['Melanie: What did you end up calling the new puppy?'], labels=['topic=pets'])
    answer_in(api, first['sessionId'], labels=['topic=names'])
    code, found, _ = api.call('retrieval', 'POST', '/query', {'query': 'What is the name of the new puppy?', 'labels': ['topic=pets']})
    assert code == 200 and ids(found) == ['Melanie: What did you end up calling the new puppy?']


def test_terms_in_half_the_rows_or_more_are_left_out_of_the_list(api: Api, store: MemoryStore) -> None:
    """A term in at least half the rows scores 0 (3.2 clamps its IDF), so it ranks nothing and would cost a read of
    every row it is in: it is not searched for, alone, beside selective terms or with other such terms."""
    # Given a name and a word in every row of a table larger than the cap, When the text lists are built, Then both are
    # counted only up to half the table and left out; the selective term alone finds its row, the two alone find nothing
    notes = [f'Caroline: note {i}' for i in range(TUNING.df_cap + 4)]
    for start in range(0, len(notes), 100):
        batch(api, notes[start : start + 100])
    batch(api, ['Caroline: the lighthouse sketch is done.'])
    db = RetrievalStore(store)
    terms = ['caroline', 'lighthouse']
    # one probe for every table: each table's terms are judged by that table's counts (few entity rows here)
    counts = db.term_counts(['entity', 'memory_chunk'], [*terms, 'note'])
    rows = counts[('memory_chunk', ROWS)]
    assert rows == TUNING.df_cap + 5
    assert counts[('memory_chunk', 'caroline')] == counts[('memory_chunk', 'note')] == (rows + 1) // 2  # counted to half
    scoring = {t: not scoreless(counts[('memory_chunk', t)], rows) for t in [*terms, 'note']}
    assert scoring == {'caroline': False, 'lighthouse': True, 'note': False}
    assert plan_terms(terms, {t: counts[('memory_chunk', t)] for t in terms}, rows) == TermPlan(('lighthouse',), ())
    where = ReadFilter(['*'], utcnow())
    assert [r.text for r in db.text('memory_chunk', terms, 5, where)] == ['Caroline: the lighthouse sketch is done.']
    # their intersection would list rows in write order at score 0: no lexical evidence
    assert db.text('memory_chunk', ['caroline', 'note'], 5, where) == []


def test_common_terms_find_their_intersection_beside_a_selective_term(api: Api, store: MemoryStore) -> None:
    """Each of the question's names and keys is in more than ``df_cap`` rows (but fewer than half) and only their
    combination is selective (a large context: bench/retrieval.py at 10k facts). A selective word that matches nothing
    ("use") must not leave the list empty: the common terms are searched for together. A word in half the rows of
    this table (more than twice the cap) is found scoreless by its score, not by counting it."""
    # Given more than df_cap rows each of Dana's walks and Eli's editor crashes, other days, and one row naming Dana's
    # editor, When /query asks in bm25 mode which editor Dana uses, Then only the row holding both common terms is
    # returned, and "day" (in half the rows) counts as scoreless
    walks = [f'Dana: I walked the dog to the park, day {i}.' for i in range(TUNING.df_cap + 1)]
    crashes = [f'Eli: my editor crashed again, take {i}.' for i in range(TUNING.df_cap + 1)]
    quiet = [f'Eli: a quiet day, number {i}.' for i in range(20)]
    rows = walks + crashes + quiet
    for start in range(0, len(rows), 100):
        batch(api, rows[start : start + 100])
    batch(api, ['Dana: my editor is Vim, nothing else.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Which editor does Dana use?', 'mode': 'bm25'})
    assert code == 200
    assert ids(body) == ['Dana: my editor is Vim, nothing else.']
    counts = RetrievalStore(store).term_counts(['memory_chunk'], ['day', 'dana'])
    total = counts[('memory_chunk', ROWS)]
    assert total == len(rows) + 1 > 2 * TUNING.df_cap
    assert counts[('memory_chunk', 'day')] == (total + 1) // 2 and scoreless(counts[('memory_chunk', 'day')], total)
    assert counts[('memory_chunk', 'dana')] == TUNING.df_cap + 1 and not scoreless(TUNING.df_cap + 1, total)


def test_in_a_large_table_only_a_term_frequent_at_either_end_is_scored_to_find_it_in_half_the_rows(
    api: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above ``half_sample_above`` rows the engine's score (~1.1 µs per row of the table) is asked only about a common
    term in ``half_sample_share`` of the first or the last rows in id order (the oldest and the newest). The documented
    cost: a term in half the rows but at neither end is kept as common, where the exact probe finds it scoreless."""
    # Given 900 rows: "day" in every other row, "dana" in every third, "late" in every row after the first 300 and
    # "mid" in rows 200 to 699 (half the table, none among the first or the last 128)
    rows = [
        f'Eli: {"day" if i % 2 else "night"} {"x" if i % 3 else "dana"} {"late" if i >= 300 else "early"} '
        f'{"mid" if 200 <= i < 700 else "edge"} {i}'
        for i in range(900)
    ]
    for start in range(0, len(rows), 100):
        batch(api, rows[start : start + 100])
    terms = ['day', 'dana', 'late', 'mid']
    # When the table is above the sampled size, Then "day" (half of either end) and "late" (all of the newest end) are
    # scored and found in half the rows; "dana" (a third) is common, and so is "mid", never scored
    tune(monkeypatch, half_sample_above=2 * TUNING.df_cap)
    counts = RetrievalStore(store, TermFrequencies()).term_counts(['memory_chunk'], terms)
    common, half = TUNING.df_cap + 1, (len(rows) + 1) // 2
    assert counts[('memory_chunk', ROWS)] == len(rows)
    assert [counts[('memory_chunk', t)] for t in terms] == [half, common, half, common]
    # And when the table is within the scored size, Then every common term is scored: "mid" is found scoreless too
    tune(monkeypatch, half_sample_above=len(rows))
    counts = RetrievalStore(store, TermFrequencies()).term_counts(['memory_chunk'], terms)
    assert [counts[('memory_chunk', t)] for t in terms] == [half, common, half, half]


def test_all_text_lists_in_one_round_trip_rank_like_each_list_alone(api: Api, store: MemoryStore) -> None:
    # Given several text lists, When built in one round trip, Then they rank like each alone and only unknown
    # frequencies are probed
    fillers = [f'Caroline: note {i}' for i in range(8)]  # the query terms stay rare enough to score above 0
    batch(api, ['Caroline: the lighthouse sketch is done.', 'Melanie: I painted the harbour at dawn.', *fillers])
    db, where = RetrievalStore(store), ReadFilter(['*'], utcnow())
    limits = {'attribute': 8, 'entity': 4, 'memory_chunk': 8}
    terms = ['lighthouse', 'harbour', 'melanie']
    together = db.text_lists(limits, terms, where)
    assert list(together) == list(limits)
    assert [r.text for r in together['memory_chunk']] and (together['memory_chunk'][0].bm25 or 0) > 0
    for table, limit in limits.items():
        assert [r.ref for r in together[table]] == [r.ref for r in db.text_lists({table: limit}, terms, where)[table]]
    calls: list[str] = []
    original = store.q
    store.q = lambda sql, **params: calls.append(sql) or original(sql, **params)  # type: ignore[method-assign]
    RetrievalStore(store, TermFrequencies()).text_lists(limits, terms, where)
    assert len(calls) == 2  # the document-frequency probe, then every list
    calls.clear()
    db.text_lists(limits, [*terms, 'dawn'], where)
    assert len(calls) == 2 and calls[0].count('count((SELECT id') == len(limits)  # only the new word is probed, in every table
    calls.clear()
    assert [r.ref for r in db.text_lists(limits, terms, where)['memory_chunk']] == [r.ref for r in together['memory_chunk']]
    assert len(calls) == 1  # every count known: the lists alone


def test_remembered_document_frequencies_expire() -> None:
    # Given remembered document frequencies, When their age passes the limit, Then they are forgotten
    now = [0.0]
    frequencies = TermFrequencies(ttl=60, max_entries=2, clock=lambda: now[0])
    frequencies.remember({('memory_chunk', 'caroline'): 257, ('memory_chunk', 'dawn'): 1})
    assert frequencies.known([('memory_chunk', 'caroline'), ('entity', 'caroline')]) == {('memory_chunk', 'caroline'): 257}
    frequencies.remember({('entity', 'caroline'): 1})  # over max_entries: the least recently used goes
    assert frequencies.known([('memory_chunk', 'dawn')]) == {}
    now[0] = 60.0
    assert frequencies.known([('memory_chunk', 'caroline'), ('entity', 'caroline')]) == {}


def test_a_possessive_names_an_entity_for_the_structured_lookup(api: Api) -> None:
    # Given favourite_food facts for Ana and Bo, When /query asks for Ana's favourite food, Then tier 1 seeds one structured row and Ana's
    # fact ranks first
    foods = (('Ana', 'ramen'), ('Bo', 'tacos'))
    triples = [{'entity': {'type': 'person', 'name': n}, 'key': 'favourite_food', 'value': v} for n, v in foods]
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': triples})
    assert code == 200, body
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': "What is Ana's favourite food?"})
    assert code == 200
    assert 'tier 1 seeded 1 structured rows' in body['trace']['tierReason']
    assert ids(body)[0] == 'Ana favourite food: ramen'


def test_a_question_about_time_ranks_the_turn_that_dates_it_first(api: Api) -> None:
    """ "When did …?" is answered by the turn that says when, not by the turns that talk most about the thing."""
    # Given two turns about Melanie's camping, one saying more about it and one saying when it was, When hybrid ranks a
    # question about when, Then the dated turn leads; a question about where keeps the other order
    chatter = [f'Melanie: We chatted about {FILLER[i % len(FILLER)]} again.' for i in range(12)]
    fond = 'Melanie: Camping by the lake with the kids is our favourite, we go camping by the lake a lot.'
    dated = 'Melanie: The kids and I were off camping last weekend.'
    batch(api, [*chatter, fond, dated])
    code, when, _ = api.call('retrieval', 'POST', '/query', {'query': 'When did Melanie go camping by the lake?', 'k': 3})
    assert code == 200
    assert ids(when)[0] == dated
    code, where, _ = api.call('retrieval', 'POST', '/query', {'query': 'Where did Melanie go camping by the lake?', 'k': 3})
    assert code == 200
    assert ids(where)[0] == fond  # the same ranking without the time question: the rule, not the rows, decided


def test_a_fact_lifts_the_passage_it_was_extracted_from(api: Api, worker: Worker) -> None:
    """A fact and the turn that said it are evidence for the same turn: the fact's score adds to that passage."""
    # Given a statement stage 0 turns into a fact and a question about the same thing it does not, When hybrid ranks,
    # Then the statement leads and its fact stays among the hits
    said, asked = 'I love pottery.', 'Do you still love pottery and the pottery classes, Caroline?'
    chatter = [('Caroline', f'We chatted about {FILLER[i % len(FILLER)]} again.') for i in range(12)]
    messages = [{'content': text, 'name': name} for name, text in [*chatter, ('Melanie', asked), ('Caroline', said)]]
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'})
    assert code == 202, body
    worker.drain()
    code, found, _ = api.call('retrieval', 'POST', '/query', {'query': 'Which pottery does Caroline like?', 'k': 5})
    assert code == 200
    texts = ids(found)
    assert texts.index(said) < texts.index(asked), texts
    assert 'Caroline likes: pottery' in texts
