"""Where a derived row may be stored: a /chat reply (turn + chunk) or a persisted reflection (CONTRACT §3).

A derived row must be no more visible than every row it was built from. Scope sets are an OR of AND-clauses and a
grant pattern covers a path exactly or by prefix, so the only scope readable by nobody who could not read every
source is the **conjunction** of the intended scope and every source's scope: each clause of the result holds one
clause of each of them. When every source shares the intended scope the conjunction is that scope itself. The result
is refused (None) when it would need more than ``MAX_CLAUSES`` clauses or a source no longer exists; the callers then
do not store the derived row (or answer 403), and they also refuse a result outside the caller's write region.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import MAX_CLAUSES, within_region
from agent_memory.domain.synthesis import Composition
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.refs import record_ref, ref_from_key
from agent_memory.rows.scopes import ScopeSets


def conjoin(a: ScopeSets, b: ScopeSets) -> ScopeSets | None:
    """``a AND b`` in the same OR-of-AND form, without redundant clauses; None past ``MAX_CLAUSES``."""
    clauses = {frozenset(x) | frozenset(y) for x in a for y in b}
    minimal = [c for c in clauses if not any(other < c for other in clauses)]  # a wider clause adds no reader
    if not minimal or len(minimal) > MAX_CLAUSES:
        return None
    return sorted(sorted(c) for c in minimal)


def narrowest(intended: ScopeSets, sources: Iterable[ScopeSets]) -> ScopeSets | None:
    result: ScopeSets | None = intended
    for scope_sets in sources:
        result = conjoin(result, scope_sets) if result is not None else None
    return result


Source = tuple[str, ScopeSets | None]  # a row's wire ref and its scope when the read already returned it


def derived_scope(store: MemoryWrites, intended: ScopeSets, sources: Sequence[Source], write_patterns: Sequence[str]) -> ScopeSets | None:
    """The scope a row built from ``sources`` is stored in, or None when no scope both hides it from everyone who could
    not read every source and lies inside the caller's write region. Scopes not already known are read in one query."""
    known = dict(sources)
    unknown = [record for record, scope_sets in known.items() if not scope_sets]
    fetched = store.scope_sets_of(unknown)
    if len(fetched) != len(unknown):
        return None  # a source vanished meanwhile: its scope is unknown, so nothing is safe
    scope = narrowest(intended, [*(s for s in known.values() if s), *fetched])
    return scope if scope is not None and within_region(scope, write_patterns) else None


def reply_sources(composition: Composition, transcript: Sequence[TurnRow]) -> list[Source]:
    """The rows a reply was built from: what it cites, every source a model read, and the transcript it read."""
    rows: list[Source] = [(ref_from_key(hit.table, hit.key), hit.scope_sets) for hit in composition.built_from]
    return rows + ([(record_ref('turn', turn.id), turn.scope_sets) for turn in transcript] if composition.read_transcript else [])
