"""Closed vocabularies (CONTRACT §4, §5) and scope paths, grant patterns and visibility (§3)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.scopes import covered, normalise_path, normalise_scope_sets, overlaps, pattern_covers, visible, within_region
from agent_memory.errors import BadRequest
from agent_memory.vocabulary import (
    ENTITY_TYPES,
    category_from_model,
    clean_display_name,
    normalise_name,
    normalise_type,
)

# ---- vocabulary -----------------------------------------------------------------------------


@pytest.mark.parametrize('raw', ENTITY_TYPES)
def test_every_closed_type_maps_to_itself(raw: str) -> None:
    # Given a type already in the closed vocabulary, When normalised, Then it is unchanged
    assert normalise_type(raw) == raw


@pytest.mark.parametrize(
    ('raw', 'expected'),
    [
        ('company', 'organisation'),
        ('org', 'organisation'),
        ('organization', 'organisation'),
        ('Organization', 'organisation'),
        ('  COMPANY  ', 'organisation'),
        ('Person', 'person'),
        ('people', 'person'),
        ('user', 'person'),
        ('city', 'location'),
        ('place', 'location'),
        ('projects', 'project'),
        ('bot', 'agent'),
        ('spaceship', 'other'),
        ('', 'other'),
        ('per son', 'other'),
    ],
)
def test_type_synonyms_fold_and_unknown_types_become_other(raw: str, expected: str) -> None:
    # Given a caller's or model's type label, When normalised, Then it lands on the closed vocabulary
    assert normalise_type(raw) == expected
    assert normalise_type(raw) in ENTITY_TYPES


@pytest.mark.parametrize(
    ('raw', 'expected'),
    [
        (' ALICE ', 'alice'),
        ('Alice   Smith', 'alice smith'),
        ('alice\tsmith\n', 'alice smith'),
        ('Straße', 'strasse'),  # casefold, not lower
        ('Cafe\u0301', 'caf\u00e9'),  # NFC: combining accent composes
    ],
)
def test_normalise_name_is_nfc_casefolded_single_spaced(raw: str, expected: str) -> None:
    # Given a raw name, When normalised for identity, Then it is NFC, case-folded and single-spaced
    assert normalise_name(raw) == expected


def test_display_name_keeps_case_but_trims_and_collapses_spaces() -> None:
    # Given a messy display name, When cleaned, Then case survives but whitespace is tidied
    assert clean_display_name('  Alice   SMITH ') == 'Alice SMITH'


@pytest.mark.parametrize(
    ('label', 'expected'),
    [
        ('identity', 'identity'),
        ('Knowledge', 'knowledge'),
        (' context ', 'context'),
        ('IDENTITY', 'identity'),
        ('episodic', 'context'),
        ('', 'context'),
        (None, 'context'),
    ],
)
def test_model_category_labels_outside_the_closed_set_become_context(label: str | None, expected: str) -> None:
    # Given a category label a model produced, When mapped, Then unknown labels are ephemeral context
    assert category_from_model(label) == expected


# ---- scope normalisation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ('raw', 'expected'),
    [
        ('org/acme', [['org/acme']]),
        ('/org/acme/', [['org/acme']]),
        (' org/acme ', [['org/acme']]),
        ('/', [['/']]),
        (['org/a', 'org/b'], [['org/a'], ['org/b']]),
        ([['org/b', 'org/a']], [['org/a', 'org/b']]),
        ([['org/a', 'org/a/']], [['org/a']]),
        ([['org/a'], ['org/a']], [['org/a']]),
        ([['team/x'], ['org/a', 'user/u']], [['org/a', 'user/u'], ['team/x']]),
    ],
)
def test_scopes_normalise_from_string_list_and_dnf(raw: object, expected: list[list[str]]) -> None:
    # Given a path, a list of paths, or a DNF of paths
    # When normalised, Then the result is a canonical, sorted, de-duplicated DNF
    assert normalise_scope_sets(raw) == expected


@pytest.mark.parametrize('raw', [None, [], ''])
def test_absent_scopes_normalise_to_none(raw: object) -> None:
    # Given no scopes, When normalised, Then None (the caller's default region applies later)
    assert normalise_scope_sets(raw) is None


@pytest.mark.parametrize(
    'raw',
    [
        'org/ac me',
        'org//acme',
        'org/acme$',
        '/'.join(['a'] * 17),
        'x' * 65,
        [['org/a'], []],
        [['org/a', 5]],
        ['org/a', ['org/b']],
        5,
        {'org': 'a'},
        [['a']] * 33,
    ],
)
def test_invalid_scopes_raise_bad_request(raw: object) -> None:
    # Given a malformed scope value, When normalised, Then a 400 BadRequest is raised
    with pytest.raises(BadRequest):
        normalise_scope_sets(raw)


def test_normalise_path_accepts_the_documented_segment_characters() -> None:
    # Given a path using every allowed punctuation, When normalised, Then it is kept
    assert normalise_path('org/acme.io/user/a@b:c_d-e') == 'org/acme.io/user/a@b:c_d-e'
    assert normalise_path('/'.join(['a'] * 16)) == '/'.join(['a'] * 16)


# ---- patterns and visibility ----------------------------------------------------------------


@pytest.mark.parametrize(
    ('pattern', 'path', 'expected'),
    [
        ('*', 'org/acme', True),
        ('*', '/', True),
        ('a/b/*', 'a/b', True),
        ('a/b/*', 'a/b/c', True),
        ('a/b/*', 'a/b/c/d', True),
        ('a/b/*', 'a/bc', False),
        ('a/b/*', 'a', False),
        ('a/b/*', 'x/a/b', False),
        ('a/b', 'a/b', True),
        ('a/b', 'a/b/c', False),
        ('a/b', 'a', False),
        ('a/b', 'a/bc', False),
        ('/', '/', True),
        ('/', 'a', False),
    ],
)
def test_pattern_covers(pattern: str, path: str, expected: bool) -> None:
    # Given a grant pattern and a scope path, When checked, Then '*' is everything, 'x/*' is x and below, else exact
    assert pattern_covers(pattern, path) is expected


def test_visible_is_an_or_of_fully_covered_and_clauses() -> None:
    # Given a record in (org/a AND team/x) OR (org/b)
    # When visibility is computed for each reader
    scope_sets = [['org/a', 'team/x'], ['org/b']]
    # Then a reader covering one whole clause sees it
    assert visible(scope_sets, ['org/b'])
    assert visible(scope_sets, ['org/a', 'team/x'])
    assert visible(scope_sets, ['org/*', 'team/*'])
    assert visible(scope_sets, ['*'])
    # And a reader covering only part of each clause does not (fail closed)
    assert not visible(scope_sets, ['org/a'])
    assert not visible(scope_sets, ['team/x', 'org/b/c'])
    assert not visible(scope_sets, [])
    # And nothing is visible with no clauses at all
    assert not visible([], ['*'])


def test_within_region_needs_every_clause_covered() -> None:
    # Given a write region of org/a/*
    # When a write's scope sets are checked against it
    region = ['org/a/*']
    # Then writes whose every clause lies inside it are allowed
    assert within_region([['org/a']], region)
    assert within_region([['org/a/x'], ['org/a/y', 'org/a']], region)
    # And a single clause outside it refuses the write, even if another clause is inside
    assert not within_region([['org/a'], ['org/b']], region)
    assert not within_region([['org/a', 'org/b']], region)
    assert not within_region([['org/ab']], region)
    assert within_region([['anything/at/all']], ['*'])


def test_overlaps_means_a_shared_clause_regardless_of_order() -> None:
    # Given two scope sets, Then they overlap iff they share a clause (order inside a clause is irrelevant)
    # When overlap is computed
    assert overlaps([['org/a', 'team/x']], [['team/x', 'org/a']])
    assert overlaps([['org/a'], ['org/b']], [['org/b']])
    assert not overlaps([['org/a']], [['org/b']])
    assert not overlaps([['org/a']], [['org/a', 'team/x']])
    assert not overlaps([['org/a']], [['org/a/b']])
    assert not overlaps([], [['org/a']])


def test_covered_is_any_pattern() -> None:
    # Given several patterns, Then a path is covered if any of them covers it
    # When a path is checked
    assert covered(['x', 'org/*'], 'org/a/b')
    assert not covered(['x', 'org/a'], 'org/a/b')
    assert not covered([], 'org')


# ---- property: visible equals a reference implementation ------------------------------------

_SEGMENTS = st.sampled_from(['a', 'b', 'ab'])
_PATHS = st.lists(_SEGMENTS, min_size=1, max_size=3).map('/'.join)
_PATTERNS = st.one_of(st.just('*'), _PATHS, _PATHS.map(lambda p: p + '/*'))
_SCOPE_SETS = st.lists(st.lists(_PATHS, min_size=1, max_size=3), min_size=0, max_size=3)


def _reference_visible(scope_sets: Sequence[Sequence[str]], patterns: Sequence[str]) -> bool:
    """Segment-wise reading of §3: a pattern covers a path if it is '*', equal to it, or 'base/*' with base a segment prefix."""

    def covers(pattern: str, path: str) -> bool:
        if pattern == '*':
            return True
        pattern_segments, path_segments = pattern.split('/'), path.split('/')
        if pattern_segments[-1] == '*':
            base = pattern_segments[:-1]
            return path_segments[: len(base)] == base
        return pattern_segments == path_segments

    return any(all(any(covers(p, s) for p in patterns) for s in clause) for clause in scope_sets)


@settings(max_examples=400, deadline=None)
@given(scope_sets=_SCOPE_SETS, patterns=st.lists(_PATTERNS, max_size=4))
def test_visible_matches_the_reference_implementation(scope_sets: list[list[str]], patterns: list[str]) -> None:
    # Given random small scope sets and reader patterns over overlapping names (a, ab, a/b …)
    # When visibility is computed, Then it equals the independent segment-wise reference
    assert visible(scope_sets, patterns) == _reference_visible(scope_sets, patterns)
