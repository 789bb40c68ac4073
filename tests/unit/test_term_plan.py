"""Which query terms a lexical list searches for, and how (db/retrieval_store.py ``plan_terms``)."""

from __future__ import annotations

from agent_memory.db.retrieval_store import TermPlan, plan_terms
from agent_memory.tuning import TUNING

COMMON = TUNING.df_cap + 1  # counts stop here: more is "common"


def test_selective_terms_are_ored_and_a_lone_common_term_beside_them_is_dropped() -> None:
    # Given two selective terms and one common term, When the terms are planned, Then the selective terms are ORed and the common one is
    # dropped
    assert plan_terms(['caroline', 'lighthouse', 'sketch'], {'caroline': COMMON, 'lighthouse': 3, 'sketch': 9}) == TermPlan(
        ('lighthouse', 'sketch'), ()
    )


def test_several_common_terms_are_searched_for_together() -> None:
    # Given three common terms beside one that matches nothing, When the terms are planned, Then the common terms form one intersection
    # beside the selective one
    counts = {'editor': COMMON, 'dana': COMMON, 'ray': COMMON, 'use': 0}
    assert plan_terms(['editor', 'dana', 'ray', 'use'], counts) == TermPlan(('use',), (('editor', 'dana', 'ray'),))


def test_only_common_terms_still_search_for_their_intersection() -> None:
    # Given only common terms, When the terms are planned, Then they are still searched for as one intersection
    assert plan_terms(['caroline'], {'caroline': COMMON}) == TermPlan((), (('caroline',),))
    assert plan_terms(['dana', 'ray'], {'dana': COMMON, 'ray': COMMON}) == TermPlan((), (('dana', 'ray'),))


def test_a_term_at_the_cap_is_still_selective() -> None:
    # Given a term counted exactly at df_cap beside a common term, When the terms are planned, Then it is selective and the lone common term
    # is dropped
    assert plan_terms(['dana', 'ray'], {'dana': TUNING.df_cap, 'ray': COMMON}) == TermPlan(('dana',), ())
