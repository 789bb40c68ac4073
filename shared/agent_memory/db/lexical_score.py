"""BM25 of a lexical list computed in the query from each matching row's analysed text, when that costs less than the
engine's scorer.

On 3.2.4 embedded, every ``search::score(n)`` builds a scorer that first sums the index's document-length log: one
entry per document ever written to the index (each write of the text adds one, a rewrite two), never compacted here. So
each scored ``@n@`` costs in proportion to the table's rows whatever it matches, while matching without a score costs
only what the terms' postings and the matched rows cost. Scoring in the query costs per matching row instead (far more
per row, but few rows), so a list that matches few rows of a large table is
scored here (``in_query_scoring``), with the engine's own formula (``Scorer::compute_bm25_score``):

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
from typing import TYPE_CHECKING, Any

from agent_memory.tuning import knobs

if TYPE_CHECKING:
    from agent_memory.db.retrieval_store import TermPlan

ANALYZER = 'memory_text'  # the analyzer of every FULLTEXT index the lists read (context migrations 0001, 0018)
K1, B = 1.2, 0.75  # the engine's BM25 defaults (DEFINE INDEX … BM25 without parameters)
LENGTH_SAMPLE = 256  # rows whose analysed length gives a table's mean length
END_SAMPLE = 128  # rows at each end of a table (in id order) whose words tell whether a common term may be in half of it


def idf(df: int, rows: int) -> float:
    return max(0.0, math.log((rows - df + 0.5) / (df + 0.5)))


def in_query_scoring(plan: TermPlan, df: Mapping[str, int], rows: int) -> bool:
    """Whether scoring in the query costs less than the engine's scorer: it costs per matching row about what the
    scorer costs per ``scorer_rows`` rows of the table and scored branch. The matching rows are estimated as the
    selective terms' counts plus the smallest count of the common group (an upper bound of their intersection). A table
    of at most ``df_cap`` rows is scored by the engine (its terms are not counted: ``retrieval_store._probe``): its
    scorer is cheap there, and the probes would cost more on a question's new words."""
    if rows <= knobs().df_cap:
        return False
    matching = sum(df[t] for t in plan.rare) + min((df[t] for group in plan.together for t in group), default=0)
    branches = len(plan.rare) + len(plan.together)
    return matching * knobs().scorer_rows < branches * rows


def mean_length_probe(table: str, field: str) -> str:
    """The mean analysed length of ``LENGTH_SAMPLE`` rows of ``table`` (NaN when it has none), as an expression."""
    return f"math::mean((SELECT VALUE array::len(search::analyze('{ANALYZER}', {field})) FROM {table} LIMIT {LENGTH_SAMPLE}))"


def end_sample(table: str, field: str, newest: bool) -> str:
    """The analysed ``field`` (``toks``) of the first (or last) ``END_SAMPLE`` rows of ``table`` in id order, as a
    SELECT; the engine scans the table's keys from either end, so the cost does not grow with the table."""
    order = 'ORDER BY id DESC ' if newest else ''
    return f"(SELECT id, search::analyze('{ANALYZER}', {field}) AS toks FROM {table} {order}LIMIT {END_SAMPLE})"


def scored_select(table: str, field: str, match: str, projection: str, limit: int, branches: Sequence[Sequence[str]],
                  idfs: Sequence[float], prefix: str) -> tuple[str, dict[str, Any]]:  # fmt: skip
    """The rows of ``table`` satisfying ``match`` (unscored ``@n@`` branches and the filters), best ``limit`` first by the
    BM25 above, projected after the LIMIT; and its parameters (names start with ``prefix``; ``$<prefix>length`` is
    avgdl, set by the caller). ``idfs`` holds one IDF per word of ``branches``, in order.

    The expression is unrolled per word (no closure: the engine runs a closure per element per row, which costs more
    than the whole unrolled score): each word's first token is counted in the row's tokens (tf), the word is present when all
    its tokens are, and a branch adds its words' scores when all of them are present. A word of several tokens ("o'neil")
    is weighed by its first token's tf and the word's own document frequency. A block's value is its last expression:
    the statement returns the rows as a SELECT does."""
    words = [w for branch in branches for w in branch]
    params: dict[str, Any] = {f'{prefix}w{j}': w for j, w in enumerate(words)} | {f'{prefix}i{j}': v for j, v in enumerate(idfs)}
    tokens = ' '.join(f"LET ${prefix}a{j} = search::analyze('{ANALYZER}', ${prefix}w{j});" for j in range(len(words)))
    counts = ', '.join(
        f'array::len(array::filter_index(toks, ${prefix}a{j}[0])) AS c{j}, ${prefix}a{j} ALLINSIDE toks AS p{j}' for j in range(len(words))
    )
    norm = f'{K1} * ({1 - B} + {B} * array::len(toks) / ${prefix}length)'
    j = 0
    parts = []
    for branch in branches:
        present = ' AND '.join(f'c{j + k} > 0 AND p{j + k}' for k in range(len(branch)))  # tf′ is finite where present
        tf = [f'(1 + math::ln(c{j + k}))' for k in range(len(branch))]
        scores = ' + '.join(f'${prefix}i{j + k} * {K1 + 1} * {tf[k]} / ({tf[k]} + norm)' for k in range(len(branch)))
        parts.append(f'(IF {present} THEN {scores} ELSE 0 END)')
        j += len(branch)
    analysed = f"SELECT *, search::analyze('{ANALYZER}', {field}) AS toks FROM {table} WHERE {match}"
    sql = (
        f'RETURN {{ {tokens} (SELECT {projection}, bm25 FROM (SELECT *, {" + ".join(parts)} AS bm25 FROM '
        f'(SELECT *, {norm} AS norm, {counts} FROM ({analysed})) ORDER BY bm25 DESC LIMIT {int(limit)}) ORDER BY bm25 DESC) }};'
    )
    return sql, params
