"""POST /reflect: a synthesis over fresh retrieval (never the cache), optionally persisted (CONTRACT §7.1).

``persist: true`` stores the reflection as a knowledge-category ``reflection`` attribute (confidence
0.6, below curated facts) on the entity the query is most about (never a self entity: those only
extraction writes), through the same reconciler as any other write. It is stored no more visible than
every row it was built from (``derived_scope``); when no such scope lies in the caller's write region the
request is 403 and nothing is written.
"""

from __future__ import annotations

import time
from typing import Any

from agent_memory.clock import new_id, utcnow
from agent_memory.domain import recall
from agent_memory.domain.auth import Caller
from agent_memory.domain.derived_scope import derived_scope, reply_sources
from agent_memory.domain.facts import remember
from agent_memory.domain.pipeline import Pipeline
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.response_trace import response_trace
from agent_memory.domain.retrieval import RetrievalRequest, Retriever
from agent_memory.domain.synthesis import MAX_SOURCES, REFLECT_SYSTEM, Composer
from agent_memory.domain.visibility import fingerprint
from agent_memory.embeddings import Embedder
from agent_memory.errors import Forbidden
from agent_memory.models import FactsRequest, ReflectRequest, Triple
from agent_memory.vocabulary import names_self_entity

REFLECTION_CONFIDENCE = 0.6


def reflect(
    store: MemoryWrites, embedder: Embedder, composer: Composer, pipeline: Pipeline, caller: Caller, request: ReflectRequest
) -> dict[str, Any]:
    started = time.perf_counter()
    caller, lens = recall.reader(caller, request)
    now = utcnow()
    where = recall.read_filter(caller, now, request)
    retrieval = Retriever(store, embedder).run(RetrievalRequest(request.query, request.k, 'hybrid', where, caller.principal_id))
    sources = (retrieval.hits + retrieval.context_hits)[:MAX_SOURCES]
    composition = composer.compose(request.query, sources, [], None, system=REFLECT_SYSTEM)
    persisted: list[dict[str, Any]] = []
    if request.persist and composition.cited:
        subject = next((r for _, h in composition.cited for r in h.entity_refs if not names_self_entity(r.split('/', 1)[1])), None)
        if subject is not None:
            scope = derived_scope(store, caller.default_scopes, reply_sources(composition, []), caller.patterns('memory:write'))
            if scope is None:
                raise Forbidden('the reflection draws on rows that no scope inside your write region keeps as private; not persisted')
            etype, name = subject.split('/', 1)
            triple = Triple.model_validate(
                {'entity': {'type': etype, 'name': name}, 'key': 'reflection', 'value': composition.reply[:4096],
                 'memory_category': 'knowledge', 'confidence': REFLECTION_CONFIDENCE}
            )  # fmt: skip
            written_request = FactsRequest(infer='triples', triples=[triple], scopes=scope)
            _, written = remember(store, caller, pipeline, written_request, None, None)
            persisted = written['extraction']['attributes']
    response_id = new_id()
    trace = recall.fresh_trace(
        caller,
        request.query,
        retrieval,
        fingerprint(caller, lens, request.labels),
        'reflect',
        now,
        latency_ms=(time.perf_counter() - started) * 1000,
    )
    citations = [{'marker': m, 'id': h.id, 'table': h.table, 'key': h.key} for m, h in composition.cited]
    answer = response_trace(response_id, 'reflect', caller, request.query, composition, citations,
                            fingerprint=trace.visibility_fingerprint, latency_ms=trace.latency_ms, now=now)  # fmt: skip
    store.traces().write(trace, answer)
    recall.reinforce(store, retrieval.hits)
    return {
        'reflection': composition.reply,
        'evidence': [h.text for _, h in composition.cited] or [h.text for h in sources[:5]],
        'persistedAttributes': persisted,
        'traceId': f'response_trace:{response_id}',
    }
