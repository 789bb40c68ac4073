"""Scope paths, grant patterns and the fail-closed visibility rule (CONTRACT §3).

A record carries ``scope_sets``: an OR of AND-clauses of scope paths. It is visible to a reader
iff at least one clause is fully covered by the reader's ``memory:read`` patterns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from agent_memory.errors import BadRequest
from agent_memory.rows.scopes import ScopeSets

ROOT = '/'
_SEGMENT = re.compile(r'[A-Za-z0-9_.@:-]{1,64}')
MAX_DEPTH = 16
MAX_CLAUSES = 32


def normalise_path(raw: str) -> str:
    """Canonical scope path: no leading or trailing slash, root is ``/``."""
    text = raw.strip()
    if text in ('', ROOT):
        return ROOT
    segments = text.strip('/').split('/')
    if len(segments) > MAX_DEPTH or not all(_SEGMENT.fullmatch(s) and s not in ('.', '..') for s in segments):
        raise BadRequest(f'invalid scope path {raw!r}')
    return '/'.join(segments)


def normalise_scope_sets(raw: object) -> ScopeSets | None:
    """Accept ``"a/b"``, ``["a/b", "c"]`` (one clause each) or ``[["a/b","c"]]``; ``None``/empty → None."""
    if raw is None or raw == [] or raw == '':
        return None
    if isinstance(raw, str):
        clauses: list[list[str]] = [[raw]]
    elif isinstance(raw, list) and all(isinstance(c, str) for c in raw):
        clauses = [[c] for c in raw]
    elif isinstance(raw, list) and all(isinstance(c, list) and all(isinstance(s, str) for s in c) for c in raw):
        clauses = [list(c) for c in raw]
    else:
        raise BadRequest('scopes must be a path, a list of paths, or a list of lists of paths')
    if len(clauses) > MAX_CLAUSES or any(len(c) == 0 for c in clauses):
        raise BadRequest(f'scopes must have 1..{MAX_CLAUSES} non-empty clauses')
    canonical = {tuple(sorted({normalise_path(s) for s in clause})) for clause in clauses}
    return [list(c) for c in sorted(canonical)]


def pattern_covers(pattern: str, path: str) -> bool:
    """``*`` covers everything; ``a/b/*`` covers ``a/b`` and descendants; ``a/b`` covers only itself."""
    if pattern == '*':
        return True
    if pattern.endswith('/*'):
        base = pattern[:-2]
        return path == base or path.startswith(base + '/')
    return pattern == path


def covered(patterns: Iterable[str], path: str) -> bool:
    return any(pattern_covers(p, path) for p in patterns)


def visible(scope_sets: Sequence[Sequence[str]], patterns: Sequence[str]) -> bool:
    return any(all(covered(patterns, s) for s in clause) for clause in scope_sets)


def readers_also_read(scope_sets: Sequence[Sequence[str]], other: Sequence[Sequence[str]]) -> bool:
    """Every reader of ``scope_sets`` can read ``other``: each clause of it holds every path of some clause of ``other``
    (a grant covering a clause's paths may cover nothing more)."""
    return all(any(set(o) <= set(clause) for o in other) for clause in scope_sets)


def region_within(region: Sequence[str] | None, patterns: Sequence[str]) -> bool:
    """Everything the grant patterns ``region`` allow, ``patterns`` allow too (``None``: an unrecorded region, taken as
    the whole context)."""
    wanted = ('*',) if region is None else region
    return all(any(pattern_within(p, q) for q in patterns) for p in wanted)


def within_region(scope_sets: Sequence[Sequence[str]], patterns: Sequence[str]) -> bool:
    """A write is allowed only if every clause lies in the caller's write region."""
    return all(all(covered(patterns, s) for s in clause) for clause in scope_sets)


def overlaps(a: Sequence[Sequence[str]], b: Sequence[Sequence[str]]) -> bool:
    """Two scope sets overlap when they share a clause (reconciliation compares within one scope)."""
    return bool({tuple(sorted(c)) for c in a} & {tuple(sorted(c)) for c in b})


def normalise_pattern(raw: str) -> str:
    """Grant patterns: ``*`` (whole context), ``a/b`` (that node) or ``a/b/*`` (node and descendants)."""
    text = raw.strip() if isinstance(raw, str) else ''
    if text in ('*', '/*'):  # '/*' is the root and everything under it: the whole context
        return '*'
    if text.endswith('/*'):
        return normalise_path(text[:-2]) + '/*'
    if not text or '*' in text:
        raise BadRequest(f'invalid grant pattern {raw!r}')
    return normalise_path(text)


def pattern_within(inner: str, outer: str) -> bool:
    """Everything ``inner`` grants is also granted by ``outer``."""
    if outer == '*':
        return True
    if inner == '*':
        return False
    if inner.endswith('/*'):
        return outer.endswith('/*') and pattern_covers(outer, inner[:-2])
    return pattern_covers(outer, inner)


def attenuate(principal: dict[str, list[str]], key: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """A key's grants may only narrow its principal's: each key pattern must lie within a principal pattern."""
    if key is None:
        return {verb: list(patterns) for verb, patterns in principal.items()}
    effective: dict[str, list[str]] = {}
    for verb, patterns in key.items():
        allowed = principal.get(verb, [])
        for pattern in patterns:
            if not any(pattern_within(pattern, outer) for outer in allowed):
                raise BadRequest(f'grant {verb} on {pattern!r} is wider than the principal holds')
        effective[verb] = list(patterns)
    return effective


def intersect_grants(outer: dict[str, list[str]], inner: dict[str, list[str]] | None) -> dict[str, list[str]]:
    """What both grant sets allow, per verb (used at request time, where narrowing never fails)."""
    if inner is None:
        return {verb: list(patterns) for verb, patterns in outer.items()}
    result: dict[str, list[str]] = {}
    for verb, outer_patterns in outer.items():
        kept: list[str] = []
        for pattern in inner.get(verb, []):
            for bound in outer_patterns:
                narrower = pattern if pattern_within(pattern, bound) else bound if pattern_within(bound, pattern) else None
                if narrower is not None and narrower not in kept:
                    kept.append(narrower)
        result[verb] = kept
    return result


def narrow_to_lens(patterns: Sequence[str], lens: Sequence[str] | None) -> list[str]:
    """Read patterns restricted to a lens; a lens outside the grant leaves nothing (empty results, never 403)."""
    if lens is None:
        return list(patterns)
    return intersect_grants({'r': list(patterns)}, {'r': [normalise_pattern(p) for p in lens]})['r']
