"""POST /sessions/{id}/context: the context block for a session, with its recent turns (CONTRACT §7.1)."""

from __future__ import annotations

from typing import Any

from agent_memory.clock import utcnow
from agent_memory.domain import recall, sessions, transcript
from agent_memory.domain.auth import Caller
from agent_memory.domain.context_block import render_context
from agent_memory.domain.ports import ContextPorts
from agent_memory.domain.retrieval import RetrievalRequest, Retriever, fact_refs
from agent_memory.domain.session_api import readable_session
from agent_memory.domain.visibility import fingerprint
from agent_memory.embeddings import Embedder
from agent_memory.models import ContextRequest, SessionContextRequest


def render(ports: ContextPorts, embedder: Embedder, caller: Caller, session_id: str, request: SessionContextRequest) -> dict[str, Any]:
    store = ports.memory
    session_key = sessions.key_of(readable_session(store, caller, session_id))
    # what was said: the replies /chat generated are no evidence (CONTRACT §7.1)
    turns = [t for t in transcript.window(store, session_key, caller.patterns('memory:read')) if t.origin != 'chat_reply']
    query = request.query or ' '.join(t.content for t in turns if t.role == 'user')[-1000:]
    if not query.strip():
        return {'context': render_context(ports.reads, caller, [], utcnow(), turns), 'sessionId': session_id}
    now = utcnow()
    where = recall.read_filter(caller, now, ContextRequest(query=query, k=request.k))
    retrieval = Retriever(store, embedder).run(RetrievalRequest(query, request.k, 'hybrid', where, caller.principal_id))
    in_window = {t.id for t in turns}
    hits = [h for h in retrieval.hits + retrieval.context_hits if h.resource.get('turnId') not in in_window]
    trace = recall.fresh_trace(caller, query, retrieval, fingerprint(caller), 'session_context', now, returned=hits, session_id=session_key)
    ports.traces.write(trace)
    ports.lifecycle.reinforce(fact_refs(hits))
    return {
        'context': render_context(ports.reads, caller, hits, now, turns),
        'sessionId': session_id,
        'traceId': f'retrieval_trace:{trace.id}',
    }
