"""Tier 2, the semantic response cache (CONTRACT §8), read from the trace graph.

A /chat message is embedded once; earlier cacheable answers of the same context with the same
visibility fingerprint (or the caller's personal one), younger than the freshness window, made either
for the same canonical question (``question_key``) or at least ``similarity_threshold`` similar (HNSW,
cosine) and not a near miss of it (when/where, my/his, this/next), are tried best-first; the first one
whose citations are still valid is served.

Two more rules: no answer is reused unless the two questions have the same numbers, identifiers,
names and relation words (``question_key.Specifics``), whatever the key or the cosine; and a same-key match stands in
for similarity only while the context's threshold is at or below the default (0.92): above it, the cosine decides.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.trace_store import TraceStore
from agent_memory.domain.context_config import ResponseCacheConfig
from agent_memory.domain.question_key import QuestionKey, Specifics, specifics
from agent_memory.domain.retrieval import Hit
from agent_memory.domain.synthesis import Composition
from agent_memory.models import ChatRequest
from agent_memory.rows.refs import key_of, ref_from_key
from agent_memory.rows.scopes import ScopeSets
from agent_memory.rows.traces import CacheCandidate, ResponseTraceRow


@dataclass(frozen=True)
class CachedAnswer:
    response_id: str
    retrieval_id: str
    similarity: float
    reply: str
    cited: list[dict[str, Any]]
    model: str | None
    read_sources: list[dict[str, Any]]  # what the original reply read beyond its citations ({table, key})
    scopes: dict[str, ScopeSets]  # scope sets of the rows it was built from, read with its validity (by record id)


@dataclass(frozen=True)
class CacheDecision:
    eligible: bool  # a fresh answer to this call may seed the cache
    hit: CachedAnswer | None
    reason: str

    def composition(self) -> Composition:
        assert self.hit is not None
        cited = [(c['marker'], _cited_hit(c, self.hit.scopes)) for c in self.hit.cited]
        # what the original read beyond its citations, with the scopes read with its validity
        cited_ids = {hit.id for _, hit in cited}
        read_only = [{**r, 'id': ref_from_key(r['table'], r['key']), 'marker': ''} for r in self.hit.read_sources]
        read = [_cited_hit(r, self.hit.scopes) for r in read_only if r['id'] not in cited_ids]
        return Composition(self.hit.reply, cited, self.hit.model, None, [self.hit.reply], read_sources=read)


def _cited_hit(citation: dict[str, Any], scopes: dict[str, ScopeSets]) -> Hit:
    table = citation['table']
    return Hit(
        citation['id'], table, float(citation.get('score') or 0.0), citation.get('snippet') or '', None, {}, None,
        tuple(citation.get('entity_refs') or ()), citation.get('role'),
        key=citation['key'], scope_sets=scopes.get(ref_from_key(table, citation['key'])),
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
    refused = admission(config, request, has_prior_turns)
    if refused is not None:
        return refused
    traces = TraceStore(store)
    since = now - dt.timedelta(seconds=config.freshness_window_seconds)
    threshold, key = config.similarity_threshold, str(question) if question else None
    checked: dict[str, dict[str, ScopeSets] | None] = {}

    def valid_scopes(answer: ResponseTraceRow) -> dict[str, ScopeSets] | None:
        if answer.ref not in checked:
            built_from = [*answer.cited, *answer.read_sources]  # CONTRACT §8: "cited" is everything it was built from
            sources = [(c['table'], c['key']) for c in built_from]
            checked[answer.ref] = traces.valid_scopes(sources, answer.cited_entity_refs, answer.created_at, now)
        return checked[answer.ref]

    # One round trip for the common hit: the KNN runs only when no answer to the same question exists ...
    found = traces.cache_candidates(vector, fingerprints, since, threshold, key, similar_after_same=False)
    decision = choose(found, question, valid_scopes, threshold, asked=request.message)
    if decision.hit is None and any(c.question_key == key for c in found):
        # ... and, when none of those is still valid, the similar answers are tried after them, as in one lookup.
        tried = {c.retrieval_id for c in found}
        found += [c for c in traces.cache_candidates(vector, fingerprints, since, threshold, None) if c.retrieval_id not in tried]
        decision = choose(found, question, valid_scopes, threshold, asked=request.message)
    return decision


def admission(config: ResponseCacheConfig, request: ChatRequest, has_prior_turns: bool) -> CacheDecision | None:
    """Step 1: a decision without looking when the call may not be served from the cache (None: look).

    A fresh answer may seed the cache only when the cache is on, no per-call model was asked for and the session has
    no prior turns; ``bypassCache`` skips serving but not seeding."""
    eligible = config.enabled and request.model is None and not has_prior_turns
    if not config.enabled:
        return CacheDecision(False, None, 'cache disabled for this context')
    if request.bypass_cache:
        return CacheDecision(eligible, None, 'bypassCache requested')
    if request.model is not None:
        return CacheDecision(False, None, 'per-call model: not served from or stored in the cache')
    if has_prior_turns:
        return CacheDecision(False, None, 'session has prior turns: fresh answer, not cached')
    return None


def choose(
    found: list[CacheCandidate],
    question: QuestionKey | None,
    valid_scopes: Callable[[ResponseTraceRow], dict[str, ScopeSets] | None],
    threshold: float,
    *,
    asked: str,
) -> CacheDecision:
    """Steps 2-3 for an eligible call: drop near misses (when/where, my/his …, or other numbers, names or relation
    words than ``asked``, the question's text), serve the first candidate whose answer is still valid (candidates come
    best first; ``valid_scopes`` gives the scopes of its sources, None when not valid), else say why nothing was
    served."""
    wanted = specifics(asked)
    candidates = [c for c in found if reusable(c, question, wanted, threshold)]
    for candidate in candidates:
        answer = candidate.answer
        scopes = valid_scopes(answer)
        if scopes is not None:
            hit = CachedAnswer(
                key_of(answer.ref), candidate.retrieval_id, candidate.similarity, answer.reply or '', answer.cited, answer.model,
                answer.read_sources, scopes,
            )  # fmt: skip
            how = 'same question' if question and candidate.question_key == str(question) else 'similar question'
            reason = f'cache hit: {how}, similarity {hit.similarity:.3f} to retrieval_trace:{hit.retrieval_id}'
            return CacheDecision(True, hit, reason)
    if candidates:
        return CacheDecision(True, None, f'cache miss: {len(candidates)} similar answers no longer valid')
    if found:
        return CacheDecision(True, None, f'cache miss: {len(found)} similar answers ask something else')
    return CacheDecision(True, None, f'cache miss: no answer to the same question or at similarity ≥ {threshold}')


DEFAULT_THRESHOLD = ResponseCacheConfig().similarity_threshold


def reusable(candidate: CacheCandidate, question: QuestionKey | None, wanted: Specifics, threshold: float) -> bool:
    """Whether ``candidate``'s answer may serve the question: not a near miss, the same specifics, and similar enough
    (a same-key match counts as similar only while the threshold is at or below the default; CONTRACT §8)."""
    if _near_miss(question, candidate.question_key) or not wanted.allow_reuse(specifics(candidate.query)):
        return False
    return candidate.similarity >= threshold or threshold <= DEFAULT_THRESHOLD


def _near_miss(question: QuestionKey | None, stored: str | None) -> bool:
    return question is not None and stored is not None and question.conflicts_with(QuestionKey.parse(stored))
