"""Reading traces back (CONTRACT §10): one by id, the newest retrievals, who reused an answer, counts per tier."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.predicates import VISIBLE, visibility_params
from agent_memory.db.records import record_id, rid
from agent_memory.rows.traces import RetrievalTraceRow, Reuse, TraceRow, TraceStats

# Tables whose rows a trace names (returned, cited, read, decided) and that carry their own scope sets.
SCOPED_TABLES = frozenset({'entity', 'attribute', 'relates_to', 'action', 'memory_chunk', 'uncertainty', 'instruction'})

_BY_TABLE: dict[str, Callable[[dict[str, Any]], TraceRow]] = {
    'retrieval_trace': to_rows.retrieval_trace,
    'response_trace': to_rows.response_trace,
    'decision_trace': to_rows.decision_trace,
}


class TraceReads:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def get(self, table: str, trace_id: str) -> TraceRow | None:
        """The trace ``<table>:<trace_id>`` (None for another table, or when there is none)."""
        convert = _BY_TABLE.get(table)
        if convert is None:
            return None
        row = self.store.q('SELECT * OMIT query_embedding FROM ONLY $id;', id=rid(table, trace_id))[0]
        return convert(row) if row else None

    def recent(self, principal: str | None, limit: int, before: dt.datetime | None) -> list[RetrievalTraceRow]:
        """The newest retrieval traces (of ``principal``, or everyone's), each with its response."""
        conditions = ['($principal IS NONE OR principal = $principal)']
        if before is not None:
            conditions.append('created_at < $before')
        sql = (
            'SELECT * OMIT query_embedding, candidates, response.retrieval_trace FROM retrieval_trace '
            f'WHERE {" AND ".join(conditions)} ORDER BY created_at DESC LIMIT {int(limit)} FETCH response;'
        )
        return [to_rows.retrieval_trace(row) for row in self.store.q(sql, principal=principal, before=before)[0] or []]

    def readable(self, refs: Sequence[str], patterns: Sequence[str]) -> set[str]:
        """The wire refs among ``refs`` that name a row that exists now and is visible to ``patterns``."""
        ids = [record_id(r) for r in dict.fromkeys(refs) if r.partition(':')[0] in SCOPED_TABLES]
        if not ids or not patterns:
            return set()
        rows = self.store.q(f'SELECT VALUE id FROM $ids WHERE {VISIBLE};', ids=ids, **visibility_params(patterns))[0] or []
        return {to_rows.required_ref(r) for r in rows}

    def reused_by(self, response_id: str, principal: str | None, limit: int = 20) -> list[Reuse]:
        """The newest cache hits that served this answer (made by ``principal``, or by anyone)."""
        sql = (
            'SELECT id, created_at, latency_ms FROM response_trace WHERE reused_from = $id '
            f'AND ($principal IS NONE OR principal = $principal) ORDER BY created_at DESC LIMIT {int(limit)};'
        )
        rows = self.store.q(sql, id=rid('response_trace', response_id), principal=principal)[0] or []
        return [Reuse(ref=to_rows.required_ref(r['id']), created_at=r['created_at'], latency_ms=r.get('latency_ms')) for r in rows]

    def stats(self, principal: str | None, since: dt.datetime) -> TraceStats:
        sql = """
            SELECT tier_entered, count() AS n, math::mean(latency_ms) AS avg_ms FROM retrieval_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY tier_entered;
            SELECT cached, count() AS n FROM response_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY cached;
            SELECT endpoint, count() AS n FROM retrieval_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY endpoint;
        """
        tiers, responses, endpoints = self.store.q(sql, principal=principal, since=since)
        return TraceStats(
            tiers=[(int(r['tier_entered']), int(r['n']), r.get('avg_ms')) for r in tiers or []],
            responses=[(bool(r['cached']), int(r['n'])) for r in responses or []],
            endpoints=[(str(r['endpoint']), int(r['n'])) for r in endpoints or []],
        )
