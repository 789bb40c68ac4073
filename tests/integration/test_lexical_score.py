"""The lexical lists' BM25 computed in the query (db/lexical_score.py), on the real engine: the same order and scores as
the engine's ``search::score`` where the inputs are exact, without ever building the engine's scorer (it re-reads the
index's whole write log per scored branch), and still finding a fact asked about by a name and a key at large-context
term frequencies."""

from __future__ import annotations

from typing import Any

import pytest

from agent_memory.clock import utcnow
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.retrieval_store import RetrievalStore
from agent_memory.rows.reads import ReadFilter
from tests.support.handlers import Api
from tests.support.round_trips import record_round_trips
from tests.support.tuning import tune

# Lengths vary (the length normalisation matters), a word repeats in one row (tf > 1), and every query word is in
# fewer than half the rows (so the engine scores it above 0), and in at most df_cap (4, below) rows: the counts are exact.
PASSAGES = [
    'Caroline: the lighthouse sketch is done.',
    'Caroline: lighthouse, lighthouse, lighthouse: I drew the lighthouse again today at the harbour.',
    'Melanie: I painted the harbour at dawn with my sister and her two dogs after a very long and windy walk.',
    'Melanie: the harbour was quiet.',
    'Caroline: my sister visited the harbour museum and bought a print of an old lighthouse for the hallway.',
    *[f'Melanie: a note about {w} number {i}.' for i, w in enumerate(['the weather', 'a podcast', 'the garden'] * 4)],
]


def batch(api: Api, contents: list[str]) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts/batch', {'messages': [{'content': c} for c in contents], 'infer': 'none'})
    assert code == 200, body


def engine_scores(store: MemoryStore, words: list[str]) -> list[tuple[str, float]]:
    """The engine's own BM25 of the same OR of one ``@n@`` per word, best first."""
    clauses = ' OR '.join(f'text @{i}@ $w{i}' for i in range(1, len(words) + 1))
    score = ' + '.join(f'search::score({i})' for i in range(1, len(words) + 1))
    rows = store.q(
        f'SELECT record::id(id) AS id, {score} AS s FROM memory_chunk_lean WHERE {clauses} ORDER BY s DESC;',
        **{f'w{i}': w for i, w in enumerate(words, start=1)},
    )[0]
    return [(row['id'], row['s']) for row in rows]


def test_the_passage_list_ranks_and_scores_as_the_engine_does_without_its_scorer(
    api: Api, store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given passages of varied lengths, one repeating a query word, When the passage list ranks three words in the query
    # (a table of at most df_cap rows is always engine-scored, and 9 matching rows of 17 would cost more than the
    # engine's scorer: the knobs make this small table a large one that chooses the query)
    tune(monkeypatch, scorer_rows=1, df_cap=4)
    batch(api, PASSAGES)
    words = ['lighthouse', 'harbour', 'sister']
    sent = record_round_trips(monkeypatch, store.database)
    found = RetrievalStore(store).text('memory_chunk', words, 32, ReadFilter(['*'], utcnow()))
    lists = sent[-1].sql
    # Then its order and scores are the engine's, and the list statement never asks the engine to score
    expected = engine_scores(store, words)
    assert len(expected) == 5
    assert [(row.ref.split(':', 1)[1], row.bm25) for row in found] == [(ref, pytest.approx(s, rel=1e-4)) for ref, s in expected]
    assert '@1@' in lists and 'search::score' not in lists


def test_a_context_of_one_passage_still_finds_it_by_its_words(api: Api) -> None:
    # Given a context whose only passage holds every query word (each in all its rows: they score 0 there), When bm25
    # ranks, Then the passage is found: in a small table no term is left out as scoreless
    batch(api, ['Alice mentioned a trip to Porto.'])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Porto trip', 'mode': 'bm25'})
    assert code == 200
    assert [h['text'] for h in body['hits']] == ['Alice mentioned a trip to Porto.']


def remember(api: Api, triples: list[dict[str, Any]]) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': triples})
    assert code == 200, body


def test_a_fact_asked_about_by_a_name_and_a_key_leads_when_each_is_common(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """The synthetic 10k-fact corpus in small: every word of the person's name and the key is in more than ``df_cap``
    fact rows (here a cap of 4) and fewer than half; only their intersection is the answer."""
    tune(monkeypatch, df_cap=4)
    people = [f'{first} {middle} Abbott' for first in ('Dana', 'Eli', 'Fay') for middle in ('Ray', 'Lou')]
    keys = {'preferred_editor': 'Emacs', 'home_city': 'Oslo', 'pet': 'a beagle'}
    triples = [{'entity': {'type': 'person', 'name': p}, 'key': k, 'value': v} for p in people for k, v in keys.items()]
    remember(api, triples)
    remember(api, [{'entity': {'type': 'person', 'name': f'Gus Max Berg{i}'}, 'key': 'car', 'value': 'a Volvo'} for i in range(12)])
    remember(api, [{'entity': {'type': 'person', 'name': 'Dana Ray Abbott'}, 'key': 'preferred_editor', 'value': 'Vim'}])
    code, body, _ = api.call('retrieval', 'POST', '/query', {'query': 'Which editor does Dana Ray Abbott use?', 'mode': 'bm25'})
    assert code == 200
    assert body['hits'][0]['text'].startswith('Dana Ray Abbott') and 'Vim' in body['hits'][0]['text']
