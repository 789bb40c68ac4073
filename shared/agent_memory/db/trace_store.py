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
from agent_memory.db.sdk import vector as bound_vector
from agent_memory.db.trace_rows import add_traces
from agent_memory.rows.scopes import ScopeSets
from agent_memory.rows.traces import CacheCandidate
from agent_memory.tuning import knobs
from agent_memory.write_ops import ResponseTrace, RetrievalTrace

# Rows that are "something new about an entity" for cache validity: (table, entity field, index on (field, created_at)).
# One index range probe per entity and field (``LIMIT 1``); the planner picks a union of index scans (or a table scan)
# for an ``IN``/``OR`` over several entities or fields and a single-field index for ``entity_ref``, all of which read
# every row the entity already has, hence one probe each, with the index named.
ABOUT_ENTITY = (
    ('attribute', 'entity_ref', 'attribute_entity_ref_created'),
    ('relates_to', 'in_ref', 'relates_to_in_ref_created'),
    ('relates_to', 'out_ref', 'relates_to_out_ref_created'),
    ('action', 'actor_ref', 'action_actor_ref_created'),
    ('action', 'object_ref', 'action_object_ref_created'),
    ('uncertainty', 'entity_ref', 'uncertainty_entity_ref_created'),
)
NEWER_THAN = '(SELECT VALUE id FROM {table} WITH INDEX {index} WHERE {field} = {ref} AND created_at > $made LIMIT 1)'


class TraceStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def write(self, retrieval: RetrievalTrace, response: ResponseTrace | None = None) -> None:
        """Write a retrieval trace and, when given, its response trace, in one transaction."""
        tx = Tx()
        add_traces(tx, retrieval, response)
        self.store.db.query(self.store.database, tx.sql(), tx.params)

    def cache_candidates(
        self,
        vector: list[float],
        fingerprints: list[str],
        since: dt.datetime,
        threshold: float,
        question_key: str | None,
        *,
        similar_after_same: bool = True,
    ) -> list[CacheCandidate]:
        """Earlier cacheable answers for one of these visibilities, fresh enough, best first: those made for the same
        canonical question (newest first), then those at least ``threshold`` similar (closest first). With
        ``similar_after_same=False`` the similarity search runs only when no answer to the same question was found (the
        common hit skips the KNN; the caller asks again with ``question_key=None`` when none of those is still valid).

        The KNN runs unfiltered over ``cache_neighbours`` traces and the filters apply to its result: on
        3.2 filters inside a KNN are evaluated per scanned row, far slower (``bench/cache.py``). The price:
        an eligible answer ranked below that many closer traces it may not use (other callers' answers to the
        same question) is not found, and the call is answered fresh. The same-question
        lookup is an index equality (``retrieval_trace_question_key``).
        """
        tuned = knobs()
        similar = (
            'SELECT id, query, question_key, created_at, response.* AS answer, distance FROM '
            '(SELECT id, query, question_key, created_at, response, cache_eligible, visibility_fingerprint, '
            'vector::distance::knn() AS distance FROM retrieval_trace '
            f'WHERE query_embedding <|{tuned.cache_neighbours},{tuned.cache_ef}|> $vector) '
            'WHERE distance IS NOT NONE AND distance <= $max_distance AND cache_eligible = true '
            'AND visibility_fingerprint IN $fps AND created_at > $since ORDER BY distance'
        )
        params = {'vector': bound_vector(vector), 'fps': fingerprints, 'since': since, 'max_distance': 1.0 - threshold, 'key': question_key}
        if question_key is None:
            # Only with a key: ``question_key = NONE`` is an index range over every keyless trace (every /query trace and
            # every answer that may not be served), each fetched with its embedding before the constant condition drops it.
            same_rows, similar_rows = [], self.store.q(similar + ';', **params)[0]
        else:
            same_question = (
                'SELECT id, query, question_key, created_at, response.* AS answer, '
                'vector::similarity::cosine(query_embedding, $vector) AS similarity FROM retrieval_trace '
                'WHERE question_key = $key AND visibility_fingerprint IN $fps AND created_at > $since '
                f'AND cache_eligible = true AND query_embedding IS NOT NONE ORDER BY created_at DESC LIMIT {tuned.same_question_limit}'
            )
            run_similar = 'true' if similar_after_same else 'array::len($same) = 0'
            sql = f'LET $same = ({same_question}); RETURN {{ same: $same, similar: IF {run_similar} THEN ({similar}) ELSE [] END }};'
            found = self.store.q(sql, **params)[-1]
            same_rows, similar_rows = found['same'], found['similar']
        rows = [*(same_rows or []), *({**row, 'similarity': 1.0 - float(row['distance'])} for row in similar_rows or [])]
        unique: dict[str, CacheCandidate] = {}
        for row in rows:  # a trace found both ways keeps its first place
            if row.get('answer'):
                found_one = CacheCandidate(
                    retrieval_id=str(bare(row['id'])),
                    question_key=row.get('question_key'),
                    similarity=float(row['similarity']),
                    answer=to_rows.response_trace(row['answer']),
                    query=str(row.get('query') or ''),
                )
                unique.setdefault(found_one.retrieval_id, found_one)
        return list(unique.values())

    def valid_scopes(
        self, built_from: list[tuple[str, Any]], entity_refs: list[str], made_at: dt.datetime, now: dt.datetime
    ) -> dict[str, ScopeSets] | None:
        """CONTRACT §8 validity of an answer made at ``made_at``: the facts it was built from exist and are current, its
        other sources exist, and nothing is new about its entities since. None when not valid; else the scope sets of
        those rows by wire ref (``attribute:<id>``, ``entity:<type>/<name>``), read in the same statement so that
        scoping the served reply needs no read."""
        facts = list(dict.fromkeys(rid(table, key) for table, key in built_from if table in ('attribute', 'relates_to', 'action')))
        others = list(dict.fromkeys(rid(table, key) for table, key in built_from if table in ('entity', 'memory_chunk')))
        params: dict[str, Any] = {'facts': facts, 'others': others, 'made': made_at, 'now': now}
        probes = []
        for n, ref in enumerate(dict.fromkeys(entity_refs)):
            params[f'r{n}'] = ref
            probes += [NEWER_THAN.format(table=table, index=index, field=field, ref=f'$r{n}') for table, field, index in ABOUT_ENTITY]
        sql = f"""
            RETURN {{
                facts: (SELECT id, scope_sets FROM $facts
                    WHERE superseded_by IS NONE AND (valid_until IS NONE OR valid_until > $now)),
                others: (SELECT id, scope_sets FROM $others),
                newer: array::len(array::flatten([{', '.join(probes)}]))
            }};
        """
        result = self.store.q(sql, **params)[0]
        if len(result['facts']) != len(facts) or len(result['others']) != len(others) or result['newer']:
            return None
        return {to_rows.required_ref(row['id']): row['scope_sets'] for row in [*result['facts'], *result['others']]}
