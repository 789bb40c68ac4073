"""Grant patterns as sets of scope paths: containment, attenuation and intersection checked by brute force."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.scopes import attenuate, covered, intersect_grants, narrow_to_lens, normalise_pattern, pattern_within
from agent_memory.errors import BadRequest

SEGMENTS = ['a', 'b', 'c']
PATHS = ['/'] + list(SEGMENTS) + [f'{x}/{y}' for x in SEGMENTS for y in SEGMENTS] + [f'a/{y}/{z}' for y in SEGMENTS for z in SEGMENTS]
patterns = st.one_of(st.just('*'), st.sampled_from(PATHS[1:]), st.sampled_from([f'{p}/*' for p in PATHS[1:]]))
# One level below every pattern's deepest path, so `x/*` and `x` cover different sets of this universe.
UNIVERSE = PATHS + [f'{p}/d' for p in PATHS[1:]]


def region(pats: list[str]) -> set[str]:
    return {p for p in UNIVERSE if covered(pats, p)}


@given(patterns, patterns)
def test_pattern_within_is_exactly_subset_of_covered_paths(inner: str, outer: str) -> None:
    # Given two grant patterns, When containment is asked, Then it answers exactly what the covered sets say
    assert pattern_within(inner, outer) == (region([inner]) <= region([outer]))


@pytest.mark.parametrize(('inner', 'outer'), [('a/b', 'a/*'), ('a/b/*', 'a/*'), ('a', '*'), ('a/b', 'a/b')])
def test_pattern_within_accepts_narrower_patterns(inner: str, outer: str) -> None:
    # Given a pattern inside another, When containment is asked, Then it is within
    assert pattern_within(inner, outer)


@given(st.lists(patterns, max_size=4), st.lists(patterns, max_size=4))
def test_intersection_never_widens_either_side(outer: list[str], inner: list[str]) -> None:
    # Given two random grants, When they are intersected, Then the result covers exactly what both cover, never more
    result = intersect_grants({'memory:read': outer}, {'memory:read': inner})['memory:read']
    assert region(result) <= region(outer) and region(result) <= region(inner)
    # and over this finite universe it loses nothing both sides share
    assert region(result) == region(outer) & region(inner)


@given(st.lists(patterns, max_size=4), st.lists(patterns, max_size=3))
def test_a_lens_only_narrows(grant: list[str], lens: list[str]) -> None:
    # Given a grant and any lens, When the grant is narrowed to the lens, Then it covers no more than the grant
    assert region(narrow_to_lens(grant, lens)) <= region(grant)


def test_attenuation_accepts_narrower_and_rejects_wider() -> None:
    # Given a principal's grants, When a key asks for narrower or wider grants, Then the narrower are kept and the wider
    # refused
    principal = {'memory:read': ['org/*'], 'memory:write': ['org/team']}
    assert attenuate(principal, {'memory:read': ['org/x/*']}) == {'memory:read': ['org/x/*']}
    with pytest.raises(BadRequest):
        attenuate(principal, {'memory:read': ['*']})
    with pytest.raises(BadRequest):
        attenuate(principal, {'memory:write': ['org/team/*']})
    with pytest.raises(BadRequest):
        attenuate(principal, {'grant:manage': ['org/*']})


@pytest.mark.parametrize('bad', ['', 'a*', 'a/*/b', '**', 'a/../b'])
def test_bad_patterns_are_rejected(bad: str) -> None:
    # Given a malformed pattern, When normalised, Then it is refused
    with pytest.raises(BadRequest):
        normalise_pattern(bad)


def test_root_wildcard_is_the_whole_context() -> None:
    # Given '/*' and a padded pattern, When normalised, Then they are '*' and the trimmed path
    assert normalise_pattern('/*') == '*'
    assert normalise_pattern(' org/a/ ') == 'org/a'
