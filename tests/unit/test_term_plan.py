"""Which query terms a lexical list searches for, and how (db/retrieval_store.py ``plan_terms``)."""

from __future__ import annotations

from agent_memory.db.retrieval_store import TermPlan, plan_terms
from agent_memory.tuning import TUNING

COMMON = TUNING.df_cap + 1  # counts stop here: more is "common"
LARGE = 100_000  # rows in the table: no term here is in half of them


def test_selective_terms_are_ored_and_a_lone_common_term_beside_them_is_dropped() -> None:
    # Given two selective terms and one common term, When the terms are planned, Then the selective terms are ORed and the common one is
    # dropped
    assert plan_terms(['caroline', 'lighthouse', 'sketch'], {'caroline': COMMON, 'lighthouse': 3, 'sketch': 9}, LARGE) == TermPlan(
        ('lighthouse', 'sketch'), ()
    )


def test_several_common_terms_are_searched_for_together() -> None:
    # Given three common terms beside one that matches nothing, When the terms are planned, Then the common terms form one intersection
    # beside the selective one
    counts = {'editor': COMMON, 'dana': COMMON, 'ray': COMMON, 'use': 0}
    assert plan_terms(['editor', 'dana', 'ray', 'use'], counts, LARGE) == TermPlan(('use',), (('editor', 'dana', 'ray'),))


def test_only_common_terms_still_search_for_their_intersection() -> None:
    # Given only common terms, When the terms are planned, Then they are still searched for as one intersection
    assert plan_terms(['caroline'], {'caroline': COMMON}, LARGE) == TermPlan((), (('caroline',),))
    assert plan_terms(['dana', 'ray'], {'dana': COMMON, 'ray': COMMON}, LARGE) == TermPlan((), (('dana', 'ray'),))


def test_a_term_at_the_cap_is_still_selective() -> None:
    # Given a term counted exactly at df_cap beside a common term, When the terms are planned, Then it is selective and the lone common term
    # is dropped
    assert plan_terms(['dana', 'ray'], {'dana': TUNING.df_cap, 'ray': COMMON}, LARGE) == TermPlan(('dana',), ())


def test_terms_in_half_the_rows_or_more_are_not_searched_for() -> None:
    # Given a conversation of 369 turns where each speaker's name is in more than half of them, When a question names
    # both speakers, Then neither name is searched for (each scores 0 there), not even as an intersection
    counts = {'jon': COMMON, 'gina': COMMON, 'destress': 1}
    assert plan_terms(['jon', 'gina', 'destress'], counts, 369) == TermPlan(('destress',), ())
    assert plan_terms(['jon', 'gina'], {'jon': COMMON, 'gina': COMMON}, 369) == TermPlan((), ())


def test_a_selective_term_in_half_of_a_small_table_is_not_searched_for() -> None:
    # Given a table of 300 rows, When a term is in exactly 150 of them and another in 149, Then only the second scores
    assert plan_terms(['half', 'under'], {'half': 150, 'under': 149}, 300) == TermPlan(('under',), ())


def test_a_term_counted_in_no_row_is_still_searched_for() -> None:
    # Given a table the counts say is empty, When a term was counted in no row, Then it is still searched for (a row written since is found)
    assert plan_terms(['new'], {'new': 0}, 0) == TermPlan(('new',), ())
