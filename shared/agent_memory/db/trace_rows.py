"""Statements that write a retrieval trace and, optionally, the response trace built from it (linked both ways)."""

from __future__ import annotations

from typing import Any

from agent_memory.db.records import Tx, content_of, rid
from agent_memory.db.sdk import vector
from agent_memory.write_ops import ResponseTrace, RetrievalTrace

# Fields only some answers carry (a /reflect answer has no session and reuses nothing): stored only when set.
_OPTIONAL = ('read_sources', 'cited_entity_refs', 'reused_from', 'session')


def _response_content(response: ResponseTrace) -> dict[str, Any]:
    content = content_of(response)
    del content['id'], content['session_key']
    content['reused_from'] = rid('response_trace', response.reused_from) if response.reused_from else None
    content['session'] = rid('session', response.session_key) if response.session_key else None
    return {k: v for k, v in content.items() if k not in _OPTIONAL or v is not None}


def add_traces(tx: Tx, retrieval: RetrievalTrace, response: ResponseTrace | None) -> None:
    row = _retrieval_content(retrieval)
    retrieval_id = rid('retrieval_trace', retrieval.id)
    if response is not None:
        answer = _response_content(response)
        response_id = rid('response_trace', response.id)
        row['response'] = response_id
        answer['retrieval_trace'] = retrieval_id
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')
        tx.add(f'CREATE {tx.p(response_id)} CONTENT {tx.p(answer)} RETURN NONE')
    else:
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')


def _retrieval_content(trace: RetrievalTrace) -> dict[str, Any]:
    """The CONTENT of a retrieval trace: the session linked by record, the vector packed, /chat's fields only from /chat."""
    row = {
        'query': trace.query,
        'query_embedding': vector(trace.query_embedding),
        'mode': trace.mode,
        'tier_entered': trace.tier_entered,
        'tier_reason': trace.tier_reason,
        'candidates': [{'id': c.id, 'table': c.table, 'score': c.score, 'lists': dict(c.lists)} for c in trace.candidates],
        'returned': [
            {'id': r.id, 'table': r.table, 'rank': r.rank, 'score': r.score, 'occurred_at': r.occurred_at} for r in trace.returned
        ],
        'latency_ms': trace.latency_ms,
        'visibility_fingerprint': trace.visibility_fingerprint,
        'session': rid('session', trace.session) if trace.session is not None else None,
        'principal': trace.principal,
        'acting_principal': trace.acting_principal,
        'read_region': list(trace.read_region),
        'endpoint': trace.endpoint,
        'source': trace.source,
        'created_at': trace.created_at,
    }
    if trace.cache_eligible is not None:
        row['cache_eligible'] = trace.cache_eligible
    if trace.question_key is not None:
        row['question_key'] = trace.question_key
    return row
