"""BM25 over the texts a process holds (db/local_text.py): the engine's formula, its word and branch semantics, and rows
replaced or dropped."""

from __future__ import annotations

import math

import pytest

from agent_memory.db.local_text import Analysed, Postings

ROWS = {
    'a': ['maya', 'book', 'flight', 'lisbon', 'confer'],
    'b': ['lisbon', 'confer', 'badg', 'pickup', 'north', 'entranc'],
    'c': ['maya', 'confer', 'hotel', 'lisbon', 'rooftop', 'pool', 'pool', 'bar', 'best', 'pool', 'town'],
    'd': ['tom', 'prefer', 'window', 'seat', 'long', 'flight'],
    'e': ['budget', 'review', 'move', 'thursday', 'afternoon'],
    'f': ['o', 'neil', 'budget', 'review', 'travel', 'twelv', 'percent'],
}


def ranked(postings: Postings, branches: list[list[tuple[str, ...]]], k: int) -> list[tuple[str, float]]:
    """``Postings.search`` over fixed ``branches`` of words given as their tokens."""
    words = {' '.join(word): word for branch in branches for word in branch}
    return postings.search(words, lambda df, rows: [[' '.join(word) for word in branch] for branch in branches], k)


def held(rows: dict[str, list[str]] = ROWS) -> Postings:
    postings = Postings()
    for key, tokens in rows.items():
        postings.put(key, tokens)
    return postings


def bm25(rows: dict[str, list[str]], branches: list[list[tuple[str, ...]]]) -> dict[str, float]:
    """The formula of lexical_score's docstring, written out over whole texts."""
    n, mean = len(rows), sum(map(len, rows.values())) / len(rows)
    scores: dict[str, float] = {}
    for key, tokens in rows.items():
        total, matched = 0.0, False
        for branch in branches:
            if not all(all(t in tokens for t in word) for word in branch):
                continue
            matched = True
            for word in branch:
                df = sum(all(t in other for t in word) for other in rows.values())
                weight = max(0.0, math.log((n - df + 0.5) / (df + 0.5)))
                tf = 1 + math.log(tokens.count(word[0]))
                total += weight * 2.2 * tf / (tf + 1.2 * (0.25 + 0.75 * len(tokens) / mean))
        if matched:
            scores[key] = total
    return scores


@pytest.mark.parametrize(
    'branches',
    [
        [[('pool',)], [('lisbon',)]],  # ORed words, one repeated in its row
        [[('budget',), ('review',)]],  # ANDed
        [[('o', 'neil')]],  # a word of two tokens: both must be there
        [[('flight',)], [('maya',), ('confer',)], [('nothing',)]],
    ],
)
def test_scores_are_the_engines_formula(branches: list[list[tuple[str, ...]]]) -> None:
    expected = bm25(ROWS, branches)
    found = dict(ranked(held(), branches, 10))
    assert found.keys() == expected.keys() and expected
    assert all(found[key] == pytest.approx(score) for key, score in expected.items())


def test_best_first_and_equal_scores_in_key_order() -> None:
    postings = held({'z': ['cat', 'dog'], 'y': ['cat', 'dog'], 'x': ['cat', 'cat', 'dog'], 'w': ['fish', 'bird'], 'v': ['eel']})
    assert [key for key, _ in ranked(postings, [[('cat',)]], 10)] == ['x', 'y', 'z']
    assert [key for key, _ in ranked(postings, [[('cat',)]], 2)] == ['x', 'y']


def test_a_word_in_half_the_rows_scores_zero_and_its_rows_come_after_the_scored_ones() -> None:
    postings = held({'a': ['maya', 'pool'], 'b': ['maya'], 'c': ['tom'], 'd': ['ana']})
    found = ranked(postings, [[('maya',)], [('pool',)]], 10)
    assert [key for key, _ in found] == ['a', 'b'] and found[0][1] > 0 and found[1][1] == 0


def test_a_row_written_again_or_dropped_changes_counts_and_lengths() -> None:
    postings = held()
    postings.put('c', ['tom', 'seat'])  # replaced
    assert postings.holding(('pool',)) == {} and set(postings.holding(('tom',))) == {'c', 'd'}
    postings.drop(['d', 'missing'])
    assert len(postings) == 5 and set(postings.holding(('seat',))) == {'c'}
    rows = {**{k: v for k, v in ROWS.items() if k != 'd'}, 'c': ['tom', 'seat']}
    assert dict(ranked(postings, [[('seat',)], [('lisbon',)]], 10)) == pytest.approx(bm25(rows, [[('seat',)], [('lisbon',)]]))
    postings.put('e', [])  # a row without text
    assert len(postings) == 5 and 'e' in postings


def test_analysed_words_are_remembered_least_recently_used_out() -> None:
    analysed = Analysed(max_entries=2)
    analysed.remember({'pools': ('pool',), 'lisbon': ('lisbon',)})
    assert analysed.known(['pools']) == {'pools': ('pool',)}
    analysed.remember({"o'neil": ('o', 'neil')})
    assert analysed.known(['pools', 'lisbon', "o'neil"]) == {'pools': ('pool',), "o'neil": ('o', 'neil')}
    analysed.remember({'x' * 65: ('x' * 65,)})  # a hostile word is analysed each time, never remembered
    assert analysed.known(['x' * 65]) == {} and len(analysed.known(['pools', "o'neil"])) == 2


def test_search_plans_on_the_words_counts_and_ranks_the_branches_it_planned() -> None:
    postings, seen = held(), []

    def plan(df: dict[str, int], rows: int) -> list[tuple[str, ...]]:
        seen.append((df, rows))
        return [('budget', 'review'), ('lisbon',)]

    words = {'budget': ('budget',), 'review': ('review',), 'lisbon': ('lisbon',), "o'neil": ('o', 'neil')}
    found = postings.search(words, plan, 10)
    assert seen == [({'budget': 2, 'review': 2, 'lisbon': 3, "o'neil": 1}, 6)]
    expected = bm25(ROWS, [[('budget',), ('review',)], [('lisbon',)]])
    assert dict(found) == pytest.approx(expected) and [s for _, s in found] == sorted(expected.values(), reverse=True)
