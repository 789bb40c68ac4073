"""Statements that write a retrieval trace and, optionally, the response trace built from it (linked both ways)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_memory.db.records import Tx, content_of, rid
from agent_memory.db.sdk import vector
from agent_memory.write_ops import ResponseTrace

# Fields only some answers carry (a /reflect answer has no session and reuses nothing): stored only when set.
_OPTIONAL = ('read_sources', 'cited_entity_refs', 'reused_from', 'session')


def _response_content(response: ResponseTrace) -> dict[str, Any]:
    content = content_of(response)
    del content['id'], content['session_key']
    content['reused_from'] = rid('response_trace', response.reused_from) if response.reused_from else None
    content['session'] = rid('session', response.session_key) if response.session_key else None
    return {k: v for k, v in content.items() if k not in _OPTIONAL or v is not None}


def add_traces(tx: Tx, retrieval: Mapping[str, Any], response: ResponseTrace | None) -> None:
    row = dict(retrieval)
    row['query_embedding'] = vector(row.get('query_embedding'))
    retrieval_id = rid('retrieval_trace', row.pop('id'))
    if isinstance(row.get('session'), str):  # the domain names the session by its stored key
        row['session'] = rid('session', row['session'])
    if response is not None:
        answer = _response_content(response)
        response_id = rid('response_trace', response.id)
        row['response'] = response_id
        answer['retrieval_trace'] = retrieval_id
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')
        tx.add(f'CREATE {tx.p(response_id)} CONTENT {tx.p(answer)} RETURN NONE')
    else:
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')
