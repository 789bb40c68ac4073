"""Tier 2, the semantic response cache (CONTRACT §8), read from the trace graph.

A /chat message is embedded once; earlier cacheable answers of the same context with the same
visibility fingerprint (or the caller's personal one), younger than the freshness window, made either
for the same canonical question (``question_key``) or at least ``similarity_threshold`` similar (HNSW,
cosine) and not a near miss of it (when/where, my/his, this/next), are tried best-first; the first one
whose citations are still valid is served.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.context_config import ResponseCacheConfig
from agent_memory.domain.question_key import QuestionKey
from agent_memory.domain.retrieval import Hit
from agent_memory.domain.synthesis import Composition
from agent_memory.models import ChatRequest
from agent_memory.rows.refs import key_of


@dataclass(frozen=True)
class CachedAnswer:
    response_id: str
    retrieval_id: str
    similarity: float
    reply: str
    cited: list[dict[str, Any]]
    model: str | None
    read_sources: list[dict[str, Any]]  # what the original reply read beyond its citations ({table, key})


@dataclass(frozen=True)
class CacheDecision:
    eligible: bool  # a fresh answer to this call may seed the cache
    hit: CachedAnswer | None
    reason: str

    def composition(self) -> Composition:
        assert self.hit is not None
        cited = [(c['marker'], _cited_hit(c)) for c in self.hit.cited]
        read = [_cited_hit({**r, 'id': '', 'marker': ''}) for r in self.hit.read_sources]  # scopes are read when stored
        return Composition(self.hit.reply, cited, self.hit.model, None, [self.hit.reply], read_sources=read)


def _cited_hit(citation: dict[str, Any]) -> Hit:
    table = citation['table']
    return Hit(
        citation['id'], table, float(citation.get('score') or 0.0), citation.get('snippet') or '', None, {}, None,
        tuple(citation.get('entity_refs') or ()), citation.get('role'),
        key=citation['key'],
    )  # fmt: skip


def consult_cache(
    store: MemoryStore,
    config: ResponseCacheConfig,
    request: ChatRequest,
    has_prior_turns: bool,
    fingerprints: list[str],
    vector: list[float],
    question: QuestionKey | None,
    now: dt.datetime,
) -> CacheDecision:
    """``fingerprints``: the visibilities whose answers this caller may be served (shared, and its personal one)."""
    eligible = config.enabled and request.model is None and not has_prior_turns
    if not config.enabled:
        return CacheDecision(False, None, 'cache disabled for this context')
    if request.bypass_cache:
        return CacheDecision(eligible, None, 'bypassCache requested')
    if request.model is not None:
        return CacheDecision(False, None, 'per-call model: not served from or stored in the cache')
    if has_prior_turns:
        return CacheDecision(False, None, 'session has prior turns: fresh answer, not cached')
    traces = TraceStore(store)
    since = now - dt.timedelta(seconds=config.freshness_window_seconds)
    found = traces.cache_candidates(vector, fingerprints, since, config.similarity_threshold, str(question) if question else None)
    candidates = [c for c in found if not _near_miss(question, c.question_key)]
    for candidate in candidates:
        answer = candidate.answer
        built_from = [*answer.cited, *answer.read_sources]  # CONTRACT §8: "cited" is everything it was built from
        if traces.still_valid([(c['table'], c['key']) for c in built_from], answer.cited_entity_refs, answer.created_at, now):
            hit = CachedAnswer(
                key_of(answer.ref), candidate.retrieval_id, candidate.similarity, answer.reply or '', answer.cited, answer.model,
                answer.read_sources,
            )  # fmt: skip
            how = 'same question' if question and candidate.question_key == str(question) else 'similar question'
            reason = f'cache hit: {how}, similarity {hit.similarity:.3f} to retrieval_trace:{hit.retrieval_id}'
            return CacheDecision(eligible, hit, reason)
    if candidates:
        return CacheDecision(eligible, None, f'cache miss: {len(candidates)} similar answers no longer valid')
    if found:
        return CacheDecision(eligible, None, f'cache miss: {len(found)} similar answers ask something else')
    return CacheDecision(eligible, None, f'cache miss: no answer to the same question or at similarity ≥ {config.similarity_threshold}')


def _near_miss(question: QuestionKey | None, stored: str | None) -> bool:
    return question is not None and stored is not None and question.conflicts_with(QuestionKey.parse(stored))
