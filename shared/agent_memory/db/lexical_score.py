"""BM25 of a lexical list computed in the query from each matching row's analysed text, not by the engine's scorer.

On 3.2.4 embedded, every ``search::score(n)`` builds a scorer that first sums the index's document-length log: one
entry per document ever written to the index (each write of the text adds one, a rewrite two), never compacted here. So
each scored ``@n@`` costs ~1.1 µs per row of the table whatever it matches (10k facts: ~11 ms a branch, 100k: ~110 ms),
while matching without a score costs only what the terms' postings and the matched rows cost (bench/README.md, Session
5). The lists therefore match unscored and score here, with the engine's own formula (``Scorer::compute_bm25_score``):

    idf = max(0, ln((N − df + 0.5) / (df + 0.5)))     tf′ = 1 + ln(tf)
    score = Σ idf · (k1 + 1) · tf′ / (tf′ + k1 · (1 − b + b · dl / avgdl))      k1 = 1.2, b = 0.75

``N`` is the table's row count and ``df`` the term's document frequency as ``RetrievalStore.term_counts`` knows them
(exact up to ``df_cap`` or half the table; a common term counts as ``df_cap`` + 1), ``tf`` and ``dl`` come from
``search::analyze`` of the row's text with the index's analyzer, and ``avgdl`` is the mean length of a sample of the
table's rows (``mean_length_probe``). A branch of several words (the common terms' AND) adds its words' scores only to
rows holding all of them, as the engine scores an ``@n@`` of several words.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

ANALYZER = 'memory_text'  # the analyzer of every FULLTEXT index the lists read (context migrations 0001, 0018)
K1, B = 1.2, 0.75  # the engine's BM25 defaults (DEFINE INDEX … BM25 without parameters)
LENGTH_SAMPLE = 256  # rows whose analysed length gives a table's mean length


def idf(df: int, rows: int) -> float:
    return max(0.0, math.log((rows - df + 0.5) / (df + 0.5)))


def weighted(branches: Sequence[Sequence[str]], counts: Mapping[str, int], rows: int) -> list[list[dict[str, Any]]]:
    """Each branch's words with their IDF: the parameter ``scored_select`` scores with."""
    return [[{'word': w, 'idf': idf(counts[w], rows)} for w in branch] for branch in branches]


def mean_length_probe(table: str, field: str) -> str:
    """The mean analysed length of ``LENGTH_SAMPLE`` rows of ``table`` (NaN when it has none), as an expression."""
    return f"math::mean((SELECT VALUE array::len(search::analyze('{ANALYZER}', {field})) FROM {table} LIMIT {LENGTH_SAMPLE}))"


def scored_select(table: str, field: str, match: str, projection: str, limit: int, weights: str, mean_length: str) -> str:
    """The rows of ``table`` satisfying ``match`` (unscored ``@n@`` branches and the filters), best ``limit`` first by the
    BM25 above, projected after the LIMIT. ``weights`` names the ``weighted`` parameter, ``mean_length`` the avgdl one.
    A block's value is its last expression: the statement returns the rows as a SELECT does."""
    tf = '(1 + math::ln(count(array::filter(toks, |$y| $y = $x.t))))'
    norm = f'({K1} * ({1 - B} + {B} * array::len(toks) / {mean_length}))'
    term = f'$x.idf * {K1 + 1} * {tf} / ({tf} + {norm})'
    score = f'math::sum(array::map($q, |$b| IF array::all($b, |$x| $x.t IN toks) THEN math::sum(array::map($b, |$x| {term})) ELSE 0 END))'
    analyse = f"array::map(search::analyze('{ANALYZER}', $w.word), |$k| {{t: $k, idf: $w.idf}})"  # a word may be 0-n tokens
    tokens = f'array::map({weights}, |$b| array::flatten(array::map($b, |$w| {analyse})))'
    analysed = f"SELECT *, search::analyze('{ANALYZER}', {field}) AS toks FROM {table} WHERE {match}"
    return (
        f'RETURN {{ LET $q = {tokens}; '
        f'(SELECT {projection}, bm25 FROM (SELECT *, {score} AS bm25 FROM ({analysed}) ORDER BY bm25 DESC LIMIT {int(limit)}) '
        'ORDER BY bm25 DESC) };'
    )
