"""Every SurrealQL statement that touches one context's memory (CONTRACT §4–§6, §10)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent_memory.db import to_rows
from agent_memory.db.connection import Database, context_db_name
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.predicates import ALL_TABLES as ALL_TABLES
from agent_memory.db.predicates import CLAUSE_IN_FORGET as CLAUSE_IN_FORGET
from agent_memory.db.predicates import CURRENT as CURRENT
from agent_memory.db.predicates import CURRENT_EDGE as CURRENT_EDGE
from agent_memory.db.predicates import ENTITY as ENTITY
from agent_memory.db.predicates import FACT_TABLES as FACT_TABLES
from agent_memory.db.predicates import INSIDE_FORGET as INSIDE_FORGET
from agent_memory.db.predicates import INSTRUCTIONS as INSTRUCTIONS
from agent_memory.db.predicates import OPEN as OPEN
from agent_memory.db.predicates import SESSIONS_NAMED as SESSIONS_NAMED
from agent_memory.db.predicates import TENTATIVE as TENTATIVE
from agent_memory.db.predicates import TOUCHES_FORGET as TOUCHES_FORGET
from agent_memory.db.predicates import TRACE_TABLES as TRACE_TABLES
from agent_memory.db.predicates import VISIBLE as VISIBLE
from agent_memory.db.predicates import address_key as address_key
from agent_memory.db.predicates import category_sql as category_sql
from agent_memory.db.predicates import entity_ref_key as entity_ref_key
from agent_memory.db.predicates import ref_address as ref_address
from agent_memory.db.predicates import uncertainties_sql as uncertainties_sql
from agent_memory.db.predicates import visibility_params as visibility_params
from agent_memory.db.records import Tx, entity_rid, record_id, ref, rid
from agent_memory.db.reinforcement import ImportanceRule
from agent_memory.db.withholding import WITHHELD, withholding
from agent_memory.plan_reads import ActiveInstruction, OpenUncertainty, StoredReply
from agent_memory.rows.control import PrincipalRow
from agent_memory.rows.conversation import SessionRow, TurnRow
from agent_memory.rows.directives import InstructionRow
from agent_memory.rows.memory import AttributeRow, RelationRow
from agent_memory.rows.refs import EntityKey

if TYPE_CHECKING:
    from agent_memory.db.forget_store import ForgetStore
    from agent_memory.db.lifecycle_store import LifecycleStore
    from agent_memory.db.retrieval_store import RetrievalStore
    from agent_memory.db.trace_store import TraceStore
    from agent_memory.db.turn_store import TurnStore
    from agent_memory.write_ops import CreateSession, WritePlan

# Where an entity's facts point at it: (LET name, table, indexed string field).
_ENTITY_FACT_LINKS = (
    ('a', 'attribute', 'entity_ref'),
    ('ro', 'relates_to', 'in_ref'),
    ('ri', 'relates_to', 'out_ref'),
    ('xa', 'action', 'actor_ref'),
    ('xo', 'action', 'object_ref'),
)


class MemoryStore:
    def __init__(self, db: Database, context_id: str, importance: ImportanceRule) -> None:
        self.db = db
        self.importance = importance
        self.context_id = context_id
        self.database = context_db_name(context_id)
        ensure_migrated(db, self.database, 'context')

    def q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(self.database, sql, params)

    def rows(self, sql: str, **params: Any) -> list[dict[str, Any]]:
        """The rows of a single SELECT/UPDATE statement."""
        return list(self.q(sql, **params)[0] or [])

    # ---- the stores built on this one (each built per call, as the domain built them before) -----
    def turns(self) -> TurnStore:
        from agent_memory.db.turn_store import TurnStore

        return TurnStore(self)

    def traces(self) -> TraceStore:
        from agent_memory.db.trace_store import TraceStore

        return TraceStore(self)

    def search(self) -> RetrievalStore:
        from agent_memory.db.retrieval_store import RetrievalStore

        return RetrievalStore(self)

    def lifecycle(self) -> LifecycleStore:
        from agent_memory.db.lifecycle_store import LifecycleStore

        return LifecycleStore(self.db, self.database, self.importance)

    def forgetting(self, region: Sequence[str], read: Sequence[str]) -> ForgetStore:
        from agent_memory.db.forget_store import ForgetStore

        return ForgetStore(self, region, read)

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

    def get_principal(self, principal_id: str) -> PrincipalRow | None:
        row = self.q('SELECT * FROM ONLY $id;', id=rid('principal', principal_id))[0]
        return to_rows.principal(row) if row else None

    # ---- sessions and turns -----------------------------------------------------------------
    def sessions_named(self, own_key: str, session_id: str) -> list[SessionRow]:
        """The caller's own session, then every other session with this client id (legacy: stored under it), oldest first."""
        rows = self.q(f'RETURN {SESSIONS_NAMED};', own=rid('session', own_key), legacy=rid('session', session_id), client=session_id)[0]
        return [to_rows.session(row) for row in rows]

    def create_session(self, session: CreateSession) -> SessionRow:
        from agent_memory.db.write_emitters import session_content  # the write path's module, on the first session

        row = session_content(session)
        return to_rows.session(self.q('CREATE $id CONTENT $row RETURN AFTER;', id=rid('session', session.key), row=row)[0][0])

    def list_turns(self, session_id: str, patterns: Sequence[str], limit: int, offset: int) -> list[TurnRow]:
        """The session's turns the reader may see, each by its own scope (a session's scope says nothing about its turns')."""
        rows = self.rows(
            f'SELECT * FROM turn WHERE session_key = $session_key AND {VISIBLE} ORDER BY seq ASC LIMIT $limit START $offset;',
            session_key=session_id,
            limit=limit,
            offset=offset,
            **visibility_params(patterns),
        )
        return [to_rows.turn(row) for row in rows]

    def close_session(self, session_id: str, now: dt.datetime) -> None:
        self.q('UPDATE $id SET closed_at = closed_at ?? $now;', id=rid('session', session_id), now=now)

    # ---- what the reconciler reads, and the write transaction --------------------------------
    def existing_entities(self, keys: Sequence[EntityKey]) -> set[EntityKey]:
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

    def live_attributes(self, addresses: Sequence[tuple[EntityKey, str]], now: dt.datetime) -> list[AttributeRow]:
        """Open rows at each (entity, key) address, across all scopes (the reconciler filters)."""
        rows = self._each(
            addresses, lambda tx, a: f'SELECT * OMIT embedding FROM attribute WHERE address = {tx.p(address_key(*a))} AND {OPEN}', now=now
        )
        return [to_rows.attribute(row) for row in rows]

    def live_attributes_of(self, entities: Sequence[EntityKey], now: dt.datetime, limit: int = 200) -> list[AttributeRow]:
        """Open rows of each entity whatever their key, across all scopes (a revision looks for the value it takes back)."""
        rows = self._each(
            entities,
            lambda tx, e: f'SELECT * OMIT embedding FROM attribute WHERE entity_ref = {tx.p(entity_ref_key(e))} AND {OPEN} LIMIT {limit}',
            now=now,
        )
        return [to_rows.attribute(row) for row in rows]

    def active_instructions(self, patterns: Sequence[str], now: dt.datetime, limit: int = 50) -> list[InstructionRow]:
        """The active instructions ``patterns`` may read, oldest first (the newest ``limit`` of them)."""
        rows = self.rows(
            f'SELECT * FROM (SELECT * FROM instruction WHERE active = true AND {VISIBLE} ORDER BY created_at DESC LIMIT $limit) '
            'ORDER BY created_at ASC;',
            limit=limit,
            now=now,
            **visibility_params(patterns),
        )
        return [to_rows.instruction(row) for row in rows]

    def live_relations(self, edges: Sequence[tuple[EntityKey, str, EntityKey]], now: dt.datetime) -> list[RelationRow]:
        rows = self._each(
            edges,
            lambda tx, e: (
                f'SELECT * FROM relates_to WHERE in_ref = {tx.p(entity_ref_key(e[0]))} '
                f'AND label = {tx.p(e[1])} AND out_ref = {tx.p(entity_ref_key(e[2]))} AND {CURRENT_EDGE}'
            ),
            now=now,
        )
        return [to_rows.relation(row) for row in rows]

    def live_edges_from(self, sources: Sequence[tuple[EntityKey, str]], now: dt.datetime) -> list[RelationRow]:
        """Current edges leaving each entity with the given label (for invalidations)."""
        rows = self._each(
            sources,
            lambda tx, s: (
                f'SELECT * FROM relates_to WHERE in_ref = {tx.p(entity_ref_key(s[0]))} AND label = {tx.p(s[1])} AND {CURRENT_EDGE}'
            ),
            now=now,
        )
        return [to_rows.relation(row) for row in rows]

    def open_uncertainties_at(self, addresses: Sequence[tuple[EntityKey, str]]) -> list[OpenUncertainty]:
        rows = self._each(
            addresses,
            lambda tx, a: f'SELECT * FROM uncertainty WHERE address = {tx.p(address_key(*a))} AND resolved = false',
        )
        return [_open_uncertainty(row) for row in rows]

    def instructions_matching(self, label_key: str, description_key: str) -> list[ActiveInstruction]:
        rows = self.rows(
            'SELECT * FROM instruction WHERE label_key = $l AND description_key = $d AND active = true ORDER BY created_at;',
            l=label_key,
            d=description_key,
        )
        return [
            ActiveInstruction(ref=ref(r['id']) or '', label=r['label'], description=r['description'], scope_sets=r['scope_sets'])
            for r in rows
        ]

    def apply(self, plan: WritePlan) -> None:
        """Apply a plan in one transaction; raises WriteConflict if an address changed since planning."""
        from agent_memory.db.write_emitters import emit_all  # on the first write: read-only routes start without it

        tx = Tx()
        emit_all(tx, tx.p(plan.now), plan.operations, self.importance)
        self.db.query(self.database, tx.sql(quiet=True), tx.params)

    # ---- idempotency ------------------------------------------------------------------------
    def idempotency_record(self, principal: str, key: str) -> StoredReply | None:
        row = self.q('SELECT * FROM ONLY $id;', id=rid('idempotency', [principal, key]))[0]
        if not row:
            return None
        return StoredReply(
            body_hash=row['body_hash'],
            status=int(row['status']),
            response_json=row['response_json'],
            created_at=row['created_at'],
            write_scope=row.get('write_scope'),
            read_region=row.get('read_region'),
        )

    def forget_idempotency(self, principal: str, key: str) -> None:
        self.q('DELETE $id;', id=rid('idempotency', [principal, key]))

    # ---- instructions and uncertainties -----------------------------------------------------
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
        closed = 'array::flatten([' + ', '.join(f'${name}' for name, _, _ in _ENTITY_FACT_LINKS) + '])'
        withheld = withholding(closed, '[$ref]')
        sql = f'BEGIN TRANSACTION;{"".join(closes)}{withheld}UPDATE $e SET updated_at = $now;RETURN {total};COMMIT TRANSACTION;'
        result = self.q(
            sql,
            e=entity_rid(*entity_key),
            ref=entity_ref_key(entity_key),
            now=now,
            withheld=WITHHELD,
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


def _open_uncertainty(row: dict[str, Any]) -> OpenUncertainty:
    entity = row.get('entity')
    key = (entity.id[0], entity.id[1]) if entity is not None else None
    return OpenUncertainty(ref=ref(row['id']) or '', entity_key=key, key=row.get('key'), scope_sets=row['scope_sets'])
