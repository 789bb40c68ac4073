"""Retrieval and response traces: written per read, listed, and searched as the response cache (CONTRACT §8, §10).

The cache is the trace graph: a cacheable /chat answer is a ``response_trace`` linked both ways to
the ``retrieval_trace`` it was built from, whose ``query_embedding`` is HNSW-indexed.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import Tx, rid
from agent_memory.db.trace_rows import add_traces
from agent_memory.domain.scopes import ScopeSets
from agent_memory.tuning import knobs

# Rows that are "something new about an entity" for cache validity: (table, entity field, index on (field, created_at)).
# One index range probe per entity and field (``LIMIT 1``); the planner picks a union of index scans (or a table scan)
# for an ``IN``/``OR`` over several entities or fields and a single-field index for ``entity_ref``, all of which read
# every row the entity already has (measured in bench/README.md), hence one probe each, with the index named.
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

    def write(self, retrieval: dict[str, Any], response: dict[str, Any] | None = None) -> None:
        """Write a retrieval trace and, when given, its response trace, in one transaction."""
        tx = Tx()
        add_traces(tx, retrieval, response)
        self.store.db.query(self.store.database, tx.sql(), tx.params)

    def cache_candidates(
        self, vector: list[float], fingerprints: list[str], since: dt.datetime, threshold: float, question_key: str | None
    ) -> list[dict[str, Any]]:
        """Earlier cacheable answers for one of these visibilities, fresh enough, best first: those made for the same
        canonical question (newest first), then those at least ``threshold`` similar (closest first).

        The KNN runs unfiltered over ``cache_neighbours`` traces and the filters apply to its result: on
        3.2 filters inside a KNN are evaluated per scanned row, 11-31x slower (bench/cache.py). The price:
        an eligible answer ranked below that many closer ineligible traces (other callers' answers to the
        same question, /query traces) is not found, and the call is answered fresh. The same-question
        lookup is an index equality (``retrieval_trace_question_key``).
        """
        tuned = knobs()
        # Only with a key: ``question_key = NONE`` is an index range over every keyless trace (every /query trace and
        # every answer that may not be served), each fetched with its embedding before ``$key IS NOT NONE`` drops it.
        same_question = (
            'SELECT id, query, question_key, created_at, response.* AS answer, '
            'vector::similarity::cosine(query_embedding, $vector) AS similarity FROM retrieval_trace '
            'WHERE question_key = $key AND visibility_fingerprint IN $fps AND created_at > $since '
            f'AND cache_eligible = true AND query_embedding IS NOT NONE ORDER BY created_at DESC LIMIT {tuned.same_question_limit};'
        )
        similar = (
            'SELECT id, query, question_key, created_at, response.* AS answer, distance FROM '
            '(SELECT id, query, question_key, created_at, response, cache_eligible, visibility_fingerprint, '
            'vector::distance::knn() AS distance FROM retrieval_trace '
            f'WHERE query_embedding <|{tuned.cache_neighbours},{tuned.cache_ef}|> $vector) '
            'WHERE distance IS NOT NONE AND distance <= $max_distance AND cache_eligible = true '
            'AND visibility_fingerprint IN $fps AND created_at > $since ORDER BY distance;'
        )
        params = {'vector': vector, 'fps': fingerprints, 'since': since, 'max_distance': 1.0 - threshold, 'key': question_key}
        *same, similar_rows = self.store.q((same_question if question_key is not None else '') + similar, **params)
        rows = [*(same[0] if same else []), *({**row, 'similarity': 1.0 - float(row['distance'])} for row in similar_rows or [])]
        unique: dict[str, dict[str, Any]] = {}
        for row in rows:  # a trace found both ways keeps its first place
            if row.get('answer'):
                unique.setdefault(str(row['id']), row)
        return list(unique.values())

    def valid_scopes(
        self, built_from: list[tuple[str, Any]], entity_refs: list[str], made_at: dt.datetime, now: dt.datetime
    ) -> dict[str, ScopeSets] | None:
        """CONTRACT §8 validity of an answer made at ``made_at``: the facts it was built from exist and are current, its
        other sources exist, and nothing is new about its entities since. None when not valid; else the scope sets of
        those rows by ``str(record id)``, read in the same statement so that scoping the served reply needs no read."""
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
        return {str(row['id']): row['scope_sets'] for row in [*result['facts'], *result['others']]}

    # ---- reads ------------------------------------------------------------------------------
    def recent(self, principal: str | None, limit: int, before: dt.datetime | None) -> list[dict[str, Any]]:
        conditions = ['($principal IS NONE OR principal = $principal)']
        if before is not None:
            conditions.append('created_at < $before')
        sql = (
            'SELECT * OMIT query_embedding, candidates, response.retrieval_trace FROM retrieval_trace '
            f'WHERE {" AND ".join(conditions)} ORDER BY created_at DESC LIMIT {int(limit)} FETCH response;'
        )
        return list(self.store.q(sql, principal=principal, before=before)[0] or [])

    def reused_by(self, response_id: str, limit: int = 20) -> list[dict[str, Any]]:
        sql = f'SELECT id, created_at, latency_ms FROM response_trace WHERE reused_from = $id ORDER BY created_at DESC LIMIT {int(limit)};'
        return list(self.store.q(sql, id=rid('response_trace', response_id))[0] or [])

    def stats(self, principal: str | None, since: dt.datetime) -> dict[str, Any]:
        sql = """
            SELECT tier_entered, count() AS n, math::mean(latency_ms) AS avg_ms FROM retrieval_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY tier_entered;
            SELECT cached, count() AS n FROM response_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY cached;
            SELECT endpoint, count() AS n FROM retrieval_trace
                WHERE created_at > $since AND ($principal IS NONE OR principal = $principal) GROUP BY endpoint;
        """
        tiers, responses, endpoints = self.store.q(sql, principal=principal, since=since)
        return {'tiers': tiers or [], 'responses': responses or [], 'endpoints': endpoints or []}
