"""Decision, retrieval and response traces as read back (CONTRACT §8, §10).

Their bodies (what a retrieval returned, what a reply cited, a decision's input and outcomes) are stored as the
domain wrote them and come back as plain JSON values; only the references between traces and to sessions and turns
are record ids, and those cross as wire strings.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ResponseTraceRow:
    ref: str  # response_trace:<id>
    created_at: dt.datetime
    principal: str | None = None
    message: str | None = None
    reply: str | None = None
    cached: bool = False
    cache_eligible: bool = False
    reused_from: str | None = None  # response_trace ref
    retrieval_trace: str | None = None  # retrieval_trace ref
    cited: list[dict[str, Any]] = field(default_factory=list)
    cited_entity_refs: list[str] = field(default_factory=list)  # what a reused answer depends on
    read_sources: list[dict[str, Any]] = field(default_factory=list)  # (table, key) of what a model read beyond its citations
    model: str | None = None
    tokens: Any = None
    session_id: str | None = None  # the id callers use
    latency_ms: float | None = None
    read_region: list[str] | None = None  # the maker's memory:read patterns (None: written before migration 0030)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetrievalTraceRow:
    ref: str  # retrieval_trace:<id>
    query: str
    tier_entered: int
    tier_reason: str
    latency_ms: float
    created_at: dt.datetime
    mode: str | None = None
    endpoint: str | None = None
    principal: str | None = None
    source: str | None = None
    session_id: str | None = None
    returned: list[dict[str, Any]] = field(default_factory=list)
    candidates: list[dict[str, Any]] = field(default_factory=list)  # the fused pool (not read by listings)
    response: str | None = None  # response_trace ref
    answer: ResponseTraceRow | None = None  # the response, where the read fetched it
    read_region: list[str] | None = None  # the maker's memory:read patterns (None: written before migration 0030)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionTraceRow:
    ref: str  # decision_trace:<id>
    created_at: dt.datetime | None = None
    principal: str | None = None
    turn: str | None = None  # bare turn id
    input: Any = None
    outcomes: Any = None
    latency_ms: float | None = None
    scope_sets: list[list[str]] | None = None  # where the write went (None: written before migration 0030)


TraceRow = RetrievalTraceRow | ResponseTraceRow | DecisionTraceRow


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheCandidate:
    """An earlier cacheable answer the response cache may serve: its retrieval trace and the answer made from it."""

    retrieval_id: str  # bare id of the retrieval trace
    question_key: str | None
    similarity: float
    answer: ResponseTraceRow
    query: str = ''  # the question it answered (its specifics must equal the new question's)


@dataclass(frozen=True, slots=True, kw_only=True)
class Reuse:
    """A later response that reused a cached one."""

    ref: str  # response_trace ref
    created_at: dt.datetime
    latency_ms: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceStats:
    tiers: list[tuple[int, int, float | None]]  # (tier entered, traces, mean latency ms)
    responses: list[tuple[bool, int]]  # (cached, response traces)
    endpoints: list[tuple[str, int]]  # (endpoint, retrieval traces)


INTERNAL_CITATION_FIELDS = ('table', 'key', 'entity_refs')  # stored on the trace for cache validity, not sent


def public_citation(citation: dict[str, Any]) -> dict[str, Any]:
    """A stored citation (``ResponseTraceRow.cited``) as callers see it."""
    return {k: v for k, v in citation.items() if k not in INTERNAL_CITATION_FIELDS}
