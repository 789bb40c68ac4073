"""Every SurrealQL statement that touches one context's memory (CONTRACT §4–§6, §10)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.connection import ALREADY_APPLIED, CONFLICT_MARKER, Database, context_db_name
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.records import Tx, entity_rid, record_id, rid
from agent_memory.db.reinforcement import ImportanceRule, reinforce_statement, reinforced_ids
from agent_memory.db.trace_rows import add_traces
from agent_memory.domain.plan_embeddings import attach_embeddings
from agent_memory.domain.write_plan import WritePlan
from agent_memory.embeddings import Embedder
from agent_memory.rows.conversation import SessionRow

CURRENT = 'superseded_by IS NONE AND valid_from <= $now AND (valid_until IS NONE OR valid_until > $now)'
# What reconciliation compares against and re-checks at commit: rows not superseded and not ended.
# Unlike CURRENT it ignores valid_from, so a row written by a concurrent request whose clock ran a
# little ahead of ours still counts (otherwise the commit-time guard would miss it).
OPEN = 'superseded_by IS NONE AND (valid_until IS NONE OR valid_until > $now)'
CURRENT_EDGE = 'valid_from <= $now AND (valid_until IS NONE OR valid_until > $now)'
VISIBLE = '($vis_all OR scope_sets.any(|$c| $c.all(|$s| $s IN $vis_exact OR $vis_prefixes.any(|$pre| string::starts_with($s, $pre)))))'
# The caller's memory:forget region (params from ``visibility_params(patterns, 'fg')``). A clause lies inside it when
# every path of the clause is covered; a row lies inside it only when every clause does (a row also readable through a
# clause outside the region belongs partly to someone else, so delete, forget and purge leave it alone).
CLAUSE_IN_FORGET = '($fg_all OR $cl.all(|$p| $p IN $fg_exact OR $fg_prefixes.any(|$pre| string::starts_with($p, $pre))))'
INSIDE_FORGET = f'(array::len(scope_sets) > 0 AND scope_sets.all(|$cl| {CLAUSE_IN_FORGET}))'
TOUCHES_FORGET = f'scope_sets.any(|$cl| {CLAUSE_IN_FORGET})'
TENTATIVE = (
    '(source_turn != NONE AND array::len((SELECT VALUE id FROM uncertainty '
    'WHERE source_turn_key = <string> record::id($parent.source_turn) AND resolved = false LIMIT 1)) > 0) AS tentative'
)
FACT_TABLES = ('entity', 'attribute', 'relates_to', 'action')
TRACE_TABLES = ('decision_trace', 'retrieval_trace', 'response_trace')
ALL_TABLES = (
    'principal',
    'session',
    'turn',
    'memory_chunk',
    'entity',
    'attribute',
    'relates_to',
    'action',
    'instruction',
    'uncertainty',
    *TRACE_TABLES,
    'idempotency',
)


def entity_ref_key(entity_key: Sequence[str]) -> str:
    """The indexed string form of an entity id (migration 0004: record-valued fields are not indexable)."""
    return f'{entity_key[0]}/{entity_key[1]}'


def address_key(entity_key: Sequence[str], key: str) -> str:
    """The indexed address of (entity, key), injective: '%' and '#' in the name are escaped (migration 0013)."""
    name = entity_key[1].replace('%', '%25').replace('#', '%23')
    return f'{entity_key[0]}/{name}#{key}'


def ref_address(entity_ref: str, key: str) -> str:
    """``address_key`` from an entity ref (``type/name``; the type never holds '/')."""
    entity_type, _, name = entity_ref.partition('/')
    return address_key((entity_type, name), key)


def visibility_params(patterns: Sequence[str], prefix: str = 'vis') -> dict[str, Any]:
    """Bind grant patterns for ``VISIBLE`` (a reader's ``memory:read``) or, with prefix ``fg``, the forget predicates."""
    exact = [p[:-2] if p.endswith('/*') else p for p in patterns if p != '*']
    prefixes = [p[:-1] for p in patterns if p.endswith('/*')]
    return {f'{prefix}_all': '*' in patterns, f'{prefix}_exact': exact, f'{prefix}_prefixes': prefixes}


ENTITY = f'SELECT * OMIT embedding FROM $id WHERE {VISIBLE};'
INSTRUCTIONS = f'SELECT * FROM instruction WHERE active = true AND {VISIBLE} ORDER BY created_at ASC LIMIT $limit;'


# A caller's session ``$own`` (``<principal>/<id>``), a legacy one stored under the bare id ``$legacy``, then every
# other session with client id ``$client``, oldest first (domain/sessions.py picks the first inside the region).
SESSIONS_NAMED = (
    'array::concat((SELECT * FROM $own), (SELECT * FROM $legacy), '
    '(SELECT * FROM session WHERE client_id = $client AND id != $own ORDER BY created_at ASC LIMIT 64))'
)


def category_sql(table: str, category_param: str) -> str:
    """The newest current visible rows of ``table`` in one memory category (bound as ``category_param``), ``$limit`` of them."""
    extra = f', {TENTATIVE}' if table == 'attribute' else ''
    current = CURRENT if table == 'attribute' else CURRENT_EDGE
    where = f'memory_category = {category_param} AND {VISIBLE}'
    if table != 'entity':
        where += f' AND {current}'
    return f'SELECT *{extra} OMIT embedding FROM {table} WHERE {where} ORDER BY created_at DESC LIMIT $limit;'


def uncertainties_sql(by_resolved: bool, after: bool) -> str:
    """Visible uncertainties by id, optionally filtered by ``$resolved`` and paged after ``$after``."""
    where = [VISIBLE]
    if by_resolved:
        where.append('resolved = $resolved')
    if after:
        where.append('id > $after')
    return f'SELECT * FROM uncertainty WHERE {" AND ".join(where)} ORDER BY id ASC LIMIT $limit;'


def stored_fact(planned: dict[str, Any]) -> dict[str, Any]:
    """A planned fact row as stored: its initial importance is the decay base (``importance`` is computed, migration 0015)."""
    row = dict(planned)
    row['importance_base'] = row.pop('importance')
    return row


def _guard_unchanged(tx: Tx, table: str, condition: str, seen_ids: list[str]) -> None:
    """Abort the transaction (a retryable conflict) if the rows matching ``condition`` are not the ones planned on."""
    seen = tx.p([rid(table, i) for i in sorted(seen_ids)])
    tx.add(f"IF array::sort((SELECT VALUE id FROM {table} WHERE {condition})) != {seen} {{ THROW '{CONFLICT_MARKER}: {table} changed' }}")


# Where an entity's facts point at it: (LET name, table, indexed string field).
_ENTITY_FACT_LINKS = (
    ('a', 'attribute', 'entity_ref'),
    ('ro', 'relates_to', 'in_ref'),
    ('ri', 'relates_to', 'out_ref'),
    ('xa', 'action', 'actor_ref'),
    ('xo', 'action', 'object_ref'),
)


class MemoryStore:
    def __init__(self, db: Database, context_id: str, importance: ImportanceRule, embedder: Embedder | None = None) -> None:
        self.db = db
        self.importance = importance
        self.context_id = context_id
        self.embedder = embedder
        self.database = context_db_name(context_id)
        ensure_migrated(db, self.database, 'context')

    def q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(self.database, sql, params)

    def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        """The rows of a single SELECT/UPDATE statement."""
        return list(self.q(sql, **params)[0] or [])

    # ---- principals -------------------------------------------------------------------------
    def ensure_reserved_principals(self, now: dt.datetime, admin_display_name: str = 'Admin', admin_external_id: str | None = None) -> None:
        """The system and admin principals; an existing one keeps its fields (the admin's name and external id apply
        when the context is created)."""
        everything = {'memory:read': ['*'], 'memory:write': ['*'], 'memory:forget': ['*'], 'grant:manage': ['*']}

        def principal(key: str, display_name: str, kind: str) -> dict[str, Any]:
            return {
                'id': rid('principal', key),
                'display_name': display_name,
                'kind': kind,
                'grants': everything,
                'default_scopes': [['/']],
                'created_at': now,
            }

        self.q(
            'INSERT INTO principal [$system, $admin] ON DUPLICATE KEY UPDATE grants = grants;',
            system=principal('system', 'System', 'service'),
            admin=principal('admin', admin_display_name, 'human') | {'external_id': admin_external_id},
        )

    def get_principal(self, principal_id: str) -> dict[str, Any] | None:
        row = self.q('SELECT * FROM ONLY $id;', id=rid('principal', principal_id))[0]
        return dict(row) if row else None

    # ---- sessions and turns -----------------------------------------------------------------
    def sessions_named(self, own_key: str, session_id: str) -> list[SessionRow]:
        """The caller's own session, then every other session with this client id (legacy: stored under it), oldest first."""
        rows = self.q(f'RETURN {SESSIONS_NAMED};', own=rid('session', own_key), legacy=rid('session', session_id), client=session_id)[0]
        return [to_rows.session(row) for row in rows]

    def create_session(self, session_id: str, row: dict[str, Any]) -> SessionRow:
        return to_rows.session(self.q('CREATE $id CONTENT $row RETURN AFTER;', id=rid('session', session_id), row=row)[0][0])

    def list_turns(self, session_id: str, patterns: Sequence[str], limit: int, offset: int) -> list[dict[str, Any]]:
        """The session's turns the reader may see, each by its own scope (a session's scope says nothing about its turns')."""
        return self.rows(
            f'SELECT * FROM turn WHERE session_key = $session_key AND {VISIBLE} ORDER BY seq ASC LIMIT $limit START $offset;',
            session_key=session_id,
            limit=limit,
            offset=offset,
            **visibility_params(patterns),
        )

    def close_session(self, session_id: str, now: dt.datetime) -> None:
        self.q('UPDATE $id SET closed_at = closed_at ?? $now;', id=rid('session', session_id), now=now)

    # ---- the write transaction --------------------------------------------------------------
    def existing_entities(self, keys: list[list[str]]) -> set[tuple[str, str]]:
        if not keys:
            return set()
        ids = self.q('SELECT VALUE id FROM $ids;', ids=[entity_rid(*k) for k in keys])[0]
        return {(i.id[0], i.id[1]) for i in ids}

    def _each(self, items: Sequence[Any], statement: Callable[[Tx, Any], str], **params: Any) -> list[dict[str, Any]]:
        """One SELECT per item, sent as a single round trip; the rows of all of them."""
        if not items:
            return []
        tx = Tx()
        for item in items:
            tx.add(statement(tx, item))
        tx.params.update(params)
        return [row for rows in self.db.query(self.database, '\n'.join(tx.statements), tx.params) for row in rows]

    def live_attributes(self, addresses: list[tuple[list[str], str]], now: dt.datetime) -> list[dict[str, Any]]:
        """Open rows at each (entity, key) address, across all scopes (the reconciler filters)."""
        return self._each(
            addresses,
            lambda tx, a: f'SELECT * FROM attribute WHERE address = {tx.p(address_key(*a))} AND {OPEN}',
            now=now,
        )

    def live_relations(self, edges: list[tuple[list[str], str, list[str]]], now: dt.datetime) -> list[dict[str, Any]]:
        return self._each(
            edges,
            lambda tx, e: (
                f'SELECT * FROM relates_to WHERE in_ref = {tx.p(entity_ref_key(e[0]))} '
                f'AND label = {tx.p(e[1])} AND out_ref = {tx.p(entity_ref_key(e[2]))} AND {CURRENT_EDGE}'
            ),
            now=now,
        )

    def live_edges_from(self, sources: list[tuple[list[str], str]], now: dt.datetime) -> list[dict[str, Any]]:
        """Current edges leaving each entity with the given label (for invalidations)."""
        return self._each(
            sources,
            lambda tx, s: (
                f'SELECT * FROM relates_to WHERE in_ref = {tx.p(entity_ref_key(s[0]))} AND label = {tx.p(s[1])} AND {CURRENT_EDGE}'
            ),
            now=now,
        )

    def open_uncertainties_at(self, addresses: list[tuple[list[str], str]]) -> list[dict[str, Any]]:
        return self._each(
            addresses,
            lambda tx, a: f'SELECT * FROM uncertainty WHERE address = {tx.p(address_key(*a))} AND resolved = false',
        )

    def apply(self, plan: WritePlan) -> None:
        """Apply a plan atomically; raises WriteConflict if an address changed since planning."""
        chunk_vectors = attach_embeddings(plan, self.embedder) if self.embedder else []
        tx = Tx()
        now = tx.p(plan.now)
        session = tx.p(rid('session', plan.session_id) if plan.session_id else None)
        if plan.turn_outcome:
            outcome = plan.turn_outcome
            turn_ref = tx.p(rid('turn', outcome.turn_id))
            tx.add(f"IF (SELECT VALUE extraction_status FROM ONLY {turn_ref}) = 'done' {{ THROW '{ALREADY_APPLIED}' }}")
            tx.add(
                f"UPDATE {turn_ref} SET extraction_status = 'done', extraction_result = {tx.p(outcome.result_json)}, "
                f'extraction_error = NONE, extraction_mode = {tx.p(outcome.mode)}, llm_error = {tx.p(outcome.llm_error)}, '
                f'extracted_at = {now}'
            )
        if plan.idempotency:
            record = plan.idempotency
            # JSON text, not an object: the SDK sends None as NONE, which would drop null fields from the replay
            stored = {
                'body_hash': record.body_hash,
                'status': record.status,
                'response_json': json.dumps(record.response),
                'created_at': plan.now,
            }
            tx.add(f'CREATE {tx.p(rid("idempotency", [record.principal, record.key]))} CONTENT {tx.p(stored)}')
        if plan.new_session:
            tx.add(f'CREATE {session} CONTENT {tx.p(plan.new_session)}')
        for guard in plan.guards:
            condition = f'address = {tx.p(address_key(guard.entity_key, guard.key))} AND {OPEN.replace("$now", now)}'
            _guard_unchanged(tx, 'attribute', condition, guard.seen_ids)
        for planned_turn in plan.turns:
            turn = dict(planned_turn)
            turn_id = turn.pop('id')
            session_key = tx.p(plan.session_id)
            tx.add(f'LET $seq = ((SELECT VALUE seq FROM turn WHERE session_key = {session_key} ORDER BY seq DESC LIMIT 1)[0] ?? 0) + 1')
            tx.add(f'CREATE {tx.p(rid("turn", turn_id))} CONTENT object::extend({tx.p(turn)}, {{ seq: $seq }})')
        for chunk in plan.chunks:
            chunk = dict(chunk)
            tx.add(f'CREATE {tx.p(rid("memory_chunk", chunk.pop("id")))} CONTENT {tx.p(chunk)}')
        for chunk_id, vector in chunk_vectors:
            tx.add(f'UPDATE {tx.p(rid("memory_chunk", chunk_id))} SET embedding = {tx.p(vector)} WHERE embedding IS NONE')
        for entity in plan.entities:
            row = dict(entity)
            tx.add(
                f'UPSERT {tx.p(entity_rid(*row.pop("key")))} SET name = name ?? $e.name, type = $e.type, '
                'memory_category = memory_category ?? $e.memory_category, importance_base = importance_base ?? $e.importance, '
                'scope_sets = array::union(scope_sets ?? [], $e.scope_sets), created_at = created_at ?? $e.created_at, '
                'self_principal = self_principal ?? $e.self_principal, embedding = embedding ?? $e.embedding, '
                'updated_at = $e.updated_at'.replace('$e', tx.p(row))
            )
        for attribute in plan.new_attributes:
            row = stored_fact(attribute)
            row['entity'] = entity_rid(*row.pop('entity_key'))
            tx.add(f'CREATE {tx.p(rid("attribute", row.pop("id")))} CONTENT {tx.p(row)}')
        for old_id, new_id in plan.superseded:
            tx.add(f'UPDATE {tx.p(rid("attribute", old_id))} SET valid_until = {now}, superseded_by = {tx.p(rid("attribute", new_id))}')
        for old_id in plan.closed_attributes:
            tx.add(f'UPDATE {tx.p(rid("attribute", old_id))} SET valid_until = {now}')
        for attr_id, confidence in plan.refreshed_attributes:
            tx.add(
                f'UPDATE {tx.p(rid("attribute", attr_id))} SET confirmed_at = {now}, '
                f'confidence = math::max([confidence, {tx.p(confidence)}])'
            )
        for relation in plan.new_relations:
            row = stored_fact(relation)
            src, dst = entity_rid(*row.pop('from_key')), entity_rid(*row.pop('to_key'))
            tx.add(f'RELATE {tx.p(src)}->{tx.p(rid("relates_to", row.pop("id")))}->{tx.p(dst)} CONTENT {tx.p(row)}')
        for rel_id in plan.refreshed_relations:
            tx.add(f'UPDATE {tx.p(rid("relates_to", rel_id))} SET confirmed_at = {now}')
        for rel_id in plan.closed_relations:
            tx.add(f'UPDATE {tx.p(rid("relates_to", rel_id))} SET valid_until = {now} WHERE valid_until IS NONE OR valid_until > {now}')
        for action in plan.new_actions:
            row = stored_fact(action)
            row['actor'] = entity_rid(*row.pop('actor_key'))
            object_key = row.pop('object_key', None)
            row['object'] = entity_rid(*object_key) if object_key else None
            tx.add(f'CREATE {tx.p(rid("action", row.pop("id")))} CONTENT {tx.p(row)}')
        for instruction_guard in plan.instruction_guards:
            condition = (
                f'label_key = {tx.p(instruction_guard.label_key)} AND description_key = {tx.p(instruction_guard.description_key)} '
                'AND active = true'
            )
            _guard_unchanged(tx, 'instruction', condition, instruction_guard.seen_ids)
        for instruction in plan.new_instructions:
            row = dict(instruction)
            tx.add(f'CREATE {tx.p(rid("instruction", row.pop("id")))} CONTENT {tx.p(row)}')
        for instruction_id, turn in plan.merged_instructions:
            tx.add(
                f'UPDATE {tx.p(rid("instruction", instruction_id))} SET merged_count += 1, '
                f'source_turns = array::union(source_turns, {tx.p([turn] if turn is not None else [])}), updated_at = {now}'
            )
        for uncertainty_id in plan.resolved_uncertainties:
            tx.add(
                f'UPDATE {tx.p(rid("uncertainty", uncertainty_id))} SET resolved = true, '
                f'resolved_by = {tx.p(rid("turn", plan.turn_outcome.turn_id) if plan.turn_outcome else None)}, '
                f'resolved_at = {now} WHERE resolved = false'
            )
        for uncertainty in plan.uncertainties:
            row = dict(uncertainty)
            if row.get('entity_key'):
                row['entity'] = entity_rid(*row.pop('entity_key'))
            row.pop('entity_key', None)
            tx.add(f'CREATE {tx.p(rid("uncertainty", row.pop("id")))} CONTENT {tx.p(row)}')
        if plan.decision_trace:
            row = dict(plan.decision_trace)
            tx.add(f'CREATE {tx.p(rid("decision_trace", row.pop("id")))} CONTENT {tx.p(row)}')
        if plan.retrieval_trace:
            add_traces(tx, plan.retrieval_trace, plan.response_trace)
        if reinforced := reinforced_ids(plan.reinforced):
            tx.add(reinforce_statement(tx, reinforced, self.importance))
        self.db.query(self.database, tx.sql(quiet=True), tx.params)

    # ---- idempotency ------------------------------------------------------------------------
    def idempotency_record(self, principal: str, key: str) -> dict[str, Any] | None:
        row = self.q('SELECT * FROM ONLY $id;', id=rid('idempotency', [principal, key]))[0]
        return dict(row) if row else None

    def forget_idempotency(self, principal: str, key: str) -> None:
        self.q('DELETE $id;', id=rid('idempotency', [principal, key]))

    # ---- instructions and uncertainties -----------------------------------------------------
    def instructions_matching(self, label_key: str, description_key: str) -> list[dict[str, Any]]:
        return self.rows(
            'SELECT * FROM instruction WHERE label_key = $l AND description_key = $d AND active = true ORDER BY created_at;',
            l=label_key,
            d=description_key,
        )

    # ---- reads ------------------------------------------------------------------------------
    def close_entity_facts(self, entity_key: list[str], now: dt.datetime, region: Sequence[str], read: Sequence[str]) -> int:
        """Soft delete: every current attribute, relation and action of the entity inside the forget ``region`` that the
        caller can ``read`` ends now (one transaction); other rows are neither touched nor counted."""
        # Select first, then update by id: the WHERE fields are indexed and must not be scanned while updated.
        closes = [
            f'LET ${name} = (UPDATE (SELECT VALUE id FROM {table} WHERE {field} = $ref AND {current} AND {INSIDE_FORGET} AND {VISIBLE}) '
            'SET valid_until = $now RETURN VALUE id);'
            for name, table, field in _ENTITY_FACT_LINKS
            for current in [CURRENT if table == 'attribute' else CURRENT_EDGE]
        ]
        total = ' + '.join(f'array::len(${name})' for name, _, _ in _ENTITY_FACT_LINKS)
        sql = f'BEGIN TRANSACTION;{"".join(closes)}UPDATE $e SET updated_at = $now;RETURN {total};COMMIT TRANSACTION;'
        result = self.q(
            sql,
            e=entity_rid(*entity_key),
            ref=entity_ref_key(entity_key),
            now=now,
            **visibility_params(region, 'fg'),
            **visibility_params(read),
        )
        return int(result[-2] or 0)

    def scope_sets_of(self, refs: Sequence[str]) -> list[list[list[str]]]:
        """The scope sets of these rows (any table, by wire ref); rows that no longer exist are left out."""
        if not refs:
            return []
        ids = [record_id(r) for r in refs]
        return [row['scope_sets'] for row in self.rows('SELECT scope_sets FROM $ids;', ids=ids) if row.get('scope_sets')]

    def table_counts(self) -> dict[str, int]:
        """Row counts per table (operators' sanity check; tests use it to prove a 4xx changed nothing)."""
        tx = Tx()
        for table in ALL_TABLES:
            tx.add(f'RETURN count((SELECT VALUE id FROM {table}))')
        values = self.db.query(self.database, '\n'.join(tx.statements))
        return {table: int(v) for table, v in zip(ALL_TABLES, values, strict=True)}
