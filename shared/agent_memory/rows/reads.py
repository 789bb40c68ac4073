"""What a read asks the repository for: the caller's filter and the two stages of a retrieval (plain data).

The repository turns these into SurrealQL (``db/retrieval_store.py``: ``where_clause``, ``filter_params``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from agent_memory.rows.candidates import Candidate


@dataclass(frozen=True)
class ReadFilter:
    """What a request may see: visibility, time, session and labels (CONTRACT §7.1)."""

    patterns: Sequence[str]
    now: dt.datetime
    as_of: dt.datetime | None = None
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    session_id: str | None = None
    labels: Sequence[str] = field(default_factory=tuple)
    # POST /forget: only rows inside this memory:forget region (entities: touching it) are candidates
    forget_region: Sequence[str] | None = None

    @property
    def temporal(self) -> bool:
        return bool(self.as_of or self.valid_from or self.valid_until)

    def keeps_every(self, table: str) -> bool:
        """Whether the WHERE clause of ``table`` (``db/retrieval_store.where_clause``) keeps every row: a passage or
        entity read by a caller who sees everything, with no time, session, label or forget filter. A KNN then needs
        no spare neighbours (``_vector_statements``)."""
        unfiltered = not (self.temporal or self.session_id or self.labels or self.forget_region is not None)
        return table in ('memory_chunk', 'entity') and '*' in self.patterns and unfiltered


@dataclass(frozen=True)
class ListLookup:
    """What the first stage of a retrieval searches for; None leaves a list out."""

    vector: list[float] | None = None  # the query's embedding: the vector lists
    terms: Sequence[str] | None = None  # the query's content words: the text lists
    principal: str | None = None  # a first-person question: the caller's self entities


@dataclass(frozen=True)
class Expansion:
    """What the second stage of a retrieval reads (``RetrievalStore.expand``); empty leaves a part out."""

    seeds: Sequence[str] = ()  # entity refs (``type/name``) graph expansion starts from
    depths: Sequence[int] = ()  # facts per table taken at the seeds, then at each hop
    named: Sequence[str] = ()  # entity refs tier 1 looks up
    parts: Collection[str] = ()  # attribute key parts (``preferred_editor`` has two) tier 1 matches
    turns: Sequence[tuple[str, int]] = ()  # (session key, seq) whose adjacent turns' passages are read


@dataclass(frozen=True)
class FoundLists:
    vector: dict[str, list[Candidate]]
    text: dict[str, list[Candidate]]
    self_entities: list[Candidate]


@dataclass(frozen=True)
class Expanded:
    graph: list[Candidate]  # by depth, then table, each best first
    tier1: list[Candidate]
    adjacent: list[Candidate]
