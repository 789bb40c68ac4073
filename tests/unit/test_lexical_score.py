"""When a lexical list is scored in the query rather than by the engine's scorer (db/lexical_score.py)."""

from __future__ import annotations

import math

from agent_memory.db.lexical_score import idf, in_query_scoring
from agent_memory.db.retrieval_store import TermPlan
from agent_memory.tuning import TUNING


def test_a_few_matching_rows_of_a_large_table_are_scored_in_the_query() -> None:
    # Given the synthetic 10k-fact question: a word in no row and a name group whose smallest count is capped
    plan = TermPlan(('use',), (('editor', 'dana', 'ray'),))
    counts = {'use': 0, 'editor': TUNING.df_cap + 1, 'dana': TUNING.df_cap + 1, 'ray': TUNING.df_cap + 1}
    # Then 257 rows at most against two branches over 10,000 rows: in the query; over 4,000 rows: the engine
    assert in_query_scoring(plan, counts, 10_000)
    assert not in_query_scoring(plan, counts, 4_000)


def test_a_list_matching_much_of_a_small_table_keeps_the_engines_scorer() -> None:
    # Given a 600-passage conversation and three selective words in 40 rows each, Then the engine scores them
    plan = TermPlan(('lighthouse', 'harbour', 'sister'), ())
    assert not in_query_scoring(plan, {'lighthouse': 40, 'harbour': 40, 'sister': 40}, 600)
    assert in_query_scoring(plan, {'lighthouse': 1, 'harbour': 2, 'sister': 3}, 600)


def test_idf_is_the_engines_clamped_at_zero() -> None:
    assert idf(1, 100) == math.log(99.5 / 1.5)
    assert idf(50, 100) == 0.0 and idf(80, 100) == 0.0


def test_a_table_of_at_most_df_cap_rows_is_always_scored_by_the_engine() -> None:
    # Given one word in one row (its terms are not counted there: every count is 0), Then a table of df_cap rows keeps
    # the engine's scorer (at most ~0.3 ms a branch), and one row more would score in the query
    plan = TermPlan(('lighthouse',), ())
    assert not in_query_scoring(plan, {'lighthouse': 0}, TUNING.df_cap)
    assert in_query_scoring(plan, {'lighthouse': 1}, TUNING.df_cap + 1)
