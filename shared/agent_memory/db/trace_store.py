"""Retrieval and response traces: written per read, listed, and searched as the response cache (CONTRACT §8, §10).

The cache is the trace graph: a cacheable /chat answer is a ``response_trace`` linked both ways to
the ``retrieval_trace`` it was built from, whose ``query_embedding`` is HNSW-indexed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import Tx, bare, rid
from agent_memory.db.trace_rows import add_traces
from agent_memory.rows.traces import CacheCandidate
from agent_memory.tuning import knobs


class TraceStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def write(self, retrieval: dict[str, Any], response: dict[str, Any] | None = None) -> None:
        """Write a retrieval trace and, when given, its response trace, in one transaction."""
        tx = Tx()
        add_traces(tx, retrieval, response)
        self.store.db.query(self.store.database, tx.sql(), tx.params)

    def cache_candidates(
        self, vector: list[float], fingerprints: list[str], since: dt.datetime, threshold: float, question_key: str | None
    ) -> list[CacheCandidate]:
        """Earlier cacheable answers for one of these visibilities, fresh enough, best first: those made for the same
        canonical question (newest first), then those at least ``threshold`` similar (closest first).

        The KNN runs unfiltered over ``cache_neighbours`` traces and the filters apply to its result: on
        3.2 filters inside a KNN are evaluated per scanned row, 11-31x slower (bench/cache.py). The price:
        an eligible answer ranked below that many closer ineligible traces (other callers' answers to the
        same question, /query traces) is not found, and the call is answered fresh. The same-question
        lookup is an index equality (``retrieval_trace_question_key``).
        """
        tuned = knobs()
        sql = (
            'SELECT id, query, question_key, created_at, response.* AS answer, '
            'vector::similarity::cosine(query_embedding, $vector) AS similarity FROM retrieval_trace '
            'WHERE $key IS NOT NONE AND question_key = $key AND visibility_fingerprint IN $fps AND created_at > $since '
            f'AND cache_eligible = true AND query_embedding IS NOT NONE ORDER BY created_at DESC LIMIT {tuned.same_question_limit};'
            'SELECT id, query, question_key, created_at, response.* AS answer, distance FROM '
            '(SELECT id, query, question_key, created_at, response, cache_eligible, visibility_fingerprint, '
            'vector::distance::knn() AS distance FROM retrieval_trace '
            f'WHERE query_embedding <|{tuned.cache_neighbours},{tuned.cache_ef}|> $vector) '
            'WHERE distance IS NOT NONE AND distance <= $max_distance AND cache_eligible = true '
            'AND visibility_fingerprint IN $fps AND created_at > $since ORDER BY distance;'
        )
        same, similar = self.store.q(sql, vector=vector, fps=fingerprints, since=since, max_distance=1.0 - threshold, key=question_key)
        rows = [*(same or []), *({**row, 'similarity': 1.0 - float(row['distance'])} for row in similar or [])]
        unique: dict[str, CacheCandidate] = {}
        for row in rows:  # a trace found both ways keeps its first place
            if row.get('answer'):
                found = CacheCandidate(
                    retrieval_id=str(bare(row['id'])),
                    question_key=row.get('question_key'),
                    similarity=float(row['similarity']),
                    answer=to_rows.response_trace(row['answer']),
                )
                unique.setdefault(found.retrieval_id, found)
        return list(unique.values())

    def still_valid(self, cited: list[tuple[str, str]], entity_refs: list[str], made_at: dt.datetime, now: dt.datetime) -> bool:
        """CONTRACT §8 validity: cited facts exist and are current; nothing new about the cited entities since."""
        facts = [rid(table, key) for table, key in cited if table in ('attribute', 'relates_to', 'action')]
        others = [rid(table, key) for table, key in cited if table in ('entity', 'memory_chunk')]
        sql = """
            RETURN {
                current: array::len(SELECT VALUE id FROM $facts
                    WHERE superseded_by IS NONE AND (valid_until IS NONE OR valid_until > $now)),
                present: array::len(SELECT VALUE id FROM $others),
                new_attributes: array::len(SELECT VALUE id FROM attribute
                    WHERE entity_ref IN $refs AND created_at > $made LIMIT 1),
                new_relations: array::len(SELECT VALUE id FROM relates_to
                    WHERE (in_ref IN $refs OR out_ref IN $refs) AND created_at > $made LIMIT 1),
                new_actions: array::len(SELECT VALUE id FROM action
                    WHERE (actor_ref IN $refs OR object_ref IN $refs) AND created_at > $made LIMIT 1),
                new_uncertainties: array::len(SELECT VALUE id FROM uncertainty
                    WHERE entity_ref IN $refs AND created_at > $made LIMIT 1)
            };
        """
        result = self.store.q(sql, facts=facts, others=others, refs=entity_refs, made=made_at, now=now)[0]
        return bool(
            result['current'] == len(facts)
            and result['present'] == len(others)
            and not (result['new_attributes'] or result['new_relations'] or result['new_actions'] or result['new_uncertainties'])
        )
