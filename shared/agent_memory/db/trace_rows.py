"""Statements that write a retrieval trace and, optionally, the response trace built from it (linked both ways)."""

from __future__ import annotations

from typing import Any

from agent_memory.db.records import Tx, rid


def add_traces(tx: Tx, retrieval: dict[str, Any], response: dict[str, Any] | None) -> None:
    row = dict(retrieval)
    retrieval_id = rid('retrieval_trace', row.pop('id'))
    if isinstance(row.get('session'), str):  # the domain names the session by its stored key
        row['session'] = rid('session', row['session'])
    if response is not None:
        answer = dict(response)
        response_id = rid('response_trace', answer.pop('id'))
        row['response'] = response_id
        answer['retrieval_trace'] = retrieval_id
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')
        tx.add(f'CREATE {tx.p(response_id)} CONTENT {tx.p(answer)} RETURN NONE')
    else:
        tx.add(f'CREATE {tx.p(retrieval_id)} CONTENT {tx.p(row)} RETURN NONE')
