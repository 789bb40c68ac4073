"""SurrealQL for the read path (CONTRACT §7): ranked candidate lists, graph expansion, seeds.

Each candidate query applies the caller's visibility predicate and the time filter inside the
database and returns at most ``limit`` rows, so the candidate pool stays bounded whatever the
size of the context. Vector lists use the HNSW indexes (``<|k,ef|>``); text lists use BM25.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.memory_store import (
    CURRENT,
    CURRENT_EDGE,
    INSIDE_FORGET,
    TOUCHES_FORGET,
    VISIBLE,
    MemoryStore,
    ref_address,
    visibility_params,
)
from agent_memory.db.records import rid
from agent_memory.db.term_frequencies import TermFrequencies, frequencies_of
from agent_memory.rows.candidates import Candidate
from agent_memory.tuning import knobs

# Every projection carries scope_sets: a reply built from these rows is stored no wider (domain/derived_scope.py)
PROJECTIONS = {
    # turn (facts): the turn a fact was extracted from, so fusion credits the passage that said it (domain/retrieval.py)
    'attribute': 'id, key, value, importance, created_at, scope_sets, entity, entity.name AS entity_name, entity.type AS entity_type, '
    'source_turn AS turn',
    'entity': 'id, name, type, importance, created_at, scope_sets',
    # spoken_at: when the turn was said (its ts); seq: the turn's place in its session (adjacent turns)
    'memory_chunk': 'id, text, created_at, role, session, turn, scope_sets, turn.observed_at AS spoken_at, turn.seq AS seq',
    'relates_to': 'id, in, out, label, importance, created_at, scope_sets, in.name AS in_name, out.name AS out_name, source_turn AS turn',
    'action': 'id, summary, actor, object, object_text, verb, importance, created_at, occurred_at, scope_sets, actor.name AS actor_name, '
    'source_turn AS turn',
}
TEXT_FIELDS = {'attribute': 'search_text', 'entity': 'name', 'memory_chunk': 'text'}
VECTOR_TABLES = ('attribute', 'entity', 'memory_chunk')


@dataclass(frozen=True)
class ReadFilter:
    """What a request may see: visibility, time, session and labels (CONTRACT §7.1)."""

    patterns: Sequence[str]
    now: dt.datetime
    as_of: dt.datetime | None = None
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    session_id: str | None = None
    labels: Sequence[str] = field(default_factory=tuple)
    # POST /forget: only rows inside this memory:forget region (entities: touching it) are candidates
    forget_region: Sequence[str] | None = None

    @property
    def temporal(self) -> bool:
        return bool(self.as_of or self.valid_from or self.valid_until)

    def params(self) -> dict[str, Any]:
        return {
            **visibility_params(self.patterns),
            'now': self.now,
            'as_of': self.as_of,
            'vf': self.valid_from,
            'vu': self.valid_until,
            'sid': self.session_id,
            'in_session': rid('session', self.session_id) if self.session_id else None,
            'labels': list(self.labels),
            **visibility_params(self.forget_region or [], 'fg'),
        }

    def predicate(self, table: str) -> str | None:
        """The WHERE clause for ``table``; None when no row of it can match (e.g. labels on graph rows)."""
        clauses = [VISIBLE]
        if self.forget_region is not None:
            clauses.append(TOUCHES_FORGET if table == 'entity' else INSIDE_FORGET)
        if table == 'memory_chunk':
            if self.as_of:
                clauses.append('created_at <= $as_of')
            if self.session_id:
                clauses.append('session = $in_session')
            if self.labels:
                clauses.append('labels CONTAINSALL $labels')
            return ' AND '.join(clauses)
        if self.labels:
            return None  # labels are stamped on passages only; graph rows never carry them
        if table == 'entity':
            if self.session_id:
                return None
            if self.as_of:
                clauses.append('created_at <= $as_of')
            return ' AND '.join(clauses)
        if self.as_of:
            clauses.append('created_at <= $as_of AND valid_from <= $as_of AND (valid_until IS NONE OR valid_until > $as_of)')
        elif self.valid_from or self.valid_until:
            if self.valid_from:
                clauses.append('(valid_until IS NONE OR valid_until > $vf)')
            if self.valid_until:
                clauses.append('valid_from < $vu')
        else:
            clauses.append(CURRENT_EDGE if table == 'relates_to' else CURRENT)
        if self.session_id:
            clauses.append('source.session_id = $sid')
        return ' AND '.join(clauses)


@dataclass(frozen=True)
class TermPlan:
    """How one table's lexical list uses the query's terms."""

    rare: tuple[str, ...]  # in at most df_cap rows (or unknown to the table): each its own scored OR branch
    together: tuple[tuple[str, ...], ...]  # common terms, ANDed: "dana", "ray" and "editor" are each in thousands of
    # rows of a large context, their intersection in one; matching each alone would cost ~50 µs per matching row


def plan_terms(terms: Sequence[str], counts: dict[str, int]) -> TermPlan:
    """Selective terms are ORed and scored; the common ones (in more than ``df_cap`` rows, agent_memory/tuning.py)
    are searched for only together, as one AND branch, when there are several of them or nothing else to search for. A single common
    term beside selective ones is left out: alone it would match (and cost) every row it is in and rank nothing
    the selective terms do not (the fixed cap used to drop every common term, so at 10k synthetic facts a question
    naming a person and a key found nothing: bench/README.md)."""
    cap = knobs().df_cap
    rare = tuple(t for t in terms if counts[t] <= cap)
    common = tuple(t for t in terms if counts[t] > cap)
    together = (common,) if len(common) > 1 or (common and not rare) else ()
    return TermPlan(rare, together)


class RetrievalStore:
    def __init__(self, store: MemoryStore, frequencies: TermFrequencies | None = None) -> None:
        self.store = store
        self.frequencies = frequencies or frequencies_of(store)

    def _rows(self, table: str, sql: str, params: dict[str, Any]) -> list[Candidate]:
        return [to_rows.candidate(table, row) for row in self.store.q(sql, **params)[0] or []]

    def vector(self, table: str, vector: list[float], limit: int, where: ReadFilter) -> list[Candidate]:
        return self.vector_lists({table: limit}, vector, where)[table]

    def vector_lists(self, limits: dict[str, int], vector: list[float], where: ReadFilter) -> dict[str, list[Candidate]]:
        """Nearest rows by cosine per table, every table in one round trip. The KNN runs unfiltered and the filter
        applies to its result: on 3.2 a predicate inside the KNN is evaluated per scanned row and costs ~10x
        (bench/README.md), so ``overfetch`` × ``limit`` neighbours are taken and filtered down to ``limit``."""
        tuned = knobs()
        statements = {}
        for table, limit in limits.items():
            predicate = where.predicate(table)
            if predicate is not None:
                statements[table] = (
                    f'SELECT {PROJECTIONS[table]}, distance FROM (SELECT *, vector::distance::knn() AS distance FROM {table} '
                    f'WHERE embedding <|{min(tuned.ef_search, math.ceil(limit * tuned.overfetch))},{tuned.ef_search}|> $vector) '
                    f'WHERE distance IS NOT NONE AND {predicate} ORDER BY distance LIMIT {int(limit)};'
                )
        return self._statements(limits, statements, {**where.params(), 'vector': vector})

    def text(self, table: str, terms: Sequence[str], limit: int, where: ReadFilter) -> list[Candidate]:
        return self.text_lists({table: limit}, terms, where)[table]

    def text_lists(self, limits: dict[str, int], terms: Sequence[str], where: ReadFilter) -> dict[str, list[Candidate]]:
        """BM25 per table, best first: one scored ``@n@`` per selective term (OR semantics: the row's score is the sum
        of its terms' scores) and the common terms ANDed into one more branch (``plan_terms``). At most two round
        trips whatever the number of tables: the document-frequency probe (skipped when every count is known), then
        the lists.

        3.2 clamps a term's score to 0 when the term is in about half the rows or more (a speaker's name in a
        conversation), so such a term adds nothing to the order; rows that match only such terms come last and
        are dropped whenever some row scored above 0 (they are no lexical evidence, only noise in the fusion).
        """
        terms = [t for t in dict.fromkeys(terms) if t][: knobs().max_terms]
        predicates = {table: where.predicate(table) for table in limits} if terms else {}
        counts = self.term_counts([t for t, p in predicates.items() if p is not None], terms)
        statements, params = {}, {}
        for table, predicate in predicates.items():
            if predicate is None:
                continue
            plan = plan_terms(terms, {t: counts[(table, t)] for t in terms})
            field_ = TEXT_FIELDS[table]
            branches = [*plan.rare, *(' '.join(group) for group in plan.together)]
            # @i@ numbers this statement's matches for search::score(i); a branch of several words is their AND
            for i, words in enumerate(branches, start=1):
                params[f'{table}_{i}'] = words
            clauses = ' OR '.join(f'{field_} @{i}@ ${table}_{i}' for i in range(1, len(branches) + 1))
            score = ' + '.join(f'search::score({i})' for i in range(1, len(branches) + 1))
            statements[table] = (
                f'SELECT {PROJECTIONS[table]}, {score} AS bm25 FROM {table} '
                f'WHERE ({clauses}) AND {predicate} ORDER BY bm25 DESC LIMIT {int(limits[table])};'
            )
        found = self._statements(limits, statements, {**where.params(), **params})
        return {table: [r for r in rows if (r.bm25 or 0) > 0] or rows for table, rows in found.items()}

    def term_counts(self, tables: Sequence[str], terms: Sequence[str]) -> dict[tuple[str, str], int]:
        """(table, term) → rows of the table holding the term, counted up to ``df_cap`` + 1 (more is "common").
        Counts come from ``self.frequencies`` when fresh; the others are probed in one round trip (as 0 in a table
        too small to hold a common term)."""
        cap = knobs().df_cap
        keys = [(table, term) for table in tables for term in terms]
        counts = self.frequencies.known(keys)
        missing = [k for k in keys if k not in counts]
        if missing:
            # a table of at most df_cap rows holds no common term: its terms are not searched for
            sizes = ''.join(f'LET $n_{t} = count((SELECT id FROM {t} LIMIT {cap + 1}));\n' for t in dict.fromkeys(t for t, _ in missing))
            probes = ', '.join(
                f'IF $n_{table} > {cap} THEN count((SELECT id FROM {table} WHERE {TEXT_FIELDS[table]} @1@ $t{i} '
                f'LIMIT {cap + 1})) ELSE 0 END'
                for i, (table, _) in enumerate(missing)
            )
            found = self.store.q(f'{sizes}RETURN [{probes}];', **{f't{i}': term for i, (_, term) in enumerate(missing)})[-1] or []
            probed = dict(zip(missing, found, strict=True))
            self.frequencies.remember(probed)
            counts.update(probed)
        return counts

    def _statements(self, tables: Iterable[str], statements: dict[str, str], params: dict[str, Any]) -> dict[str, list[Candidate]]:
        """Run one SELECT per table in a single round trip; tables without a statement get no rows."""
        results = self.store.q('\n'.join(statements.values()), **params) if statements else []
        found = {table: [to_rows.candidate(table, row) for row in rows or []] for table, rows in zip(statements, results, strict=True)}
        return {table: found.get(table, []) for table in tables}

    def adjacent_passages(self, turns: Sequence[tuple[str, int]], where: ReadFilter) -> list[Candidate]:
        """The first passage of the turns just before and after each (session id, seq), filtered like any passage."""
        predicate = where.predicate('memory_chunk')
        if predicate is None or not turns:
            return []
        clauses = ' OR '.join(f'(session_key = $s{i} AND seq IN $n{i})' for i in range(len(turns)))
        sql = (
            f'LET $turns = SELECT VALUE record::id(id) FROM turn WHERE {clauses};\n'
            f"SELECT {PROJECTIONS['memory_chunk']} FROM array::map($turns, |$t| type::record('memory_chunk', $t + '_0')) "
            f'WHERE {predicate};'
        )
        params: dict[str, Any] = {**where.params()}
        for i, (session, seq) in enumerate(turns):
            params[f's{i}'], params[f'n{i}'] = session, [seq - 1, seq + 1]
        return [to_rows.candidate('memory_chunk', row) for row in self.store.q(sql, **params)[-1] or []]

    def self_entities(self, principal_id: str, where: ReadFilter) -> list[Candidate]:
        predicate = where.predicate('entity')
        if predicate is None:
            return []
        sql = f'SELECT {PROJECTIONS["entity"]} FROM entity WHERE self_principal = $principal AND {predicate} LIMIT 4;'
        return self._rows('entity', sql, {**where.params(), 'principal': principal_id})

    def neighbours(self, refs: list[str], where: ReadFilter) -> list[str]:
        """Entities one hop from ``refs`` over visible relations (both directions), as ``type/name`` strings."""
        predicate = where.predicate('relates_to')
        if predicate is None or not refs:
            return []
        sql = (
            f'RETURN array::distinct(array::concat((SELECT VALUE out_ref FROM relates_to WHERE in_ref IN $refs AND {predicate} LIMIT 128), '
            f'(SELECT VALUE in_ref FROM relates_to WHERE out_ref IN $refs AND {predicate} LIMIT 128)));'
        )
        return [str(r) for r in (self.store.q(sql, **where.params(), refs=refs)[0] or [])]

    def facts_about(self, refs: list[str], limit: int, where: ReadFilter, vector: list[float] | None) -> list[Candidate]:
        """Attributes (closest to the query first), relations and actions (most important first) of these entities."""
        if not refs:
            return []
        closeness = 'IF embedding AND $vector THEN vector::similarity::cosine(embedding, $vector) ELSE 0 END AS closeness'
        statements, tables = [], []
        for table, condition, extra, order in (
            ('attribute', 'entity_ref IN $refs', f', {closeness}', 'closeness DESC, importance DESC'),
            ('relates_to', '(in_ref IN $refs OR out_ref IN $refs)', '', 'importance DESC'),
            ('action', '(actor_ref IN $refs OR object_ref IN $refs)', '', 'importance DESC'),
        ):
            predicate = where.predicate(table)
            if predicate is not None:
                statements.append(
                    f'SELECT {PROJECTIONS[table]}{extra} FROM {table} WHERE {condition} AND {predicate} '
                    f'ORDER BY {order} LIMIT {int(limit)};'
                )
                tables.append(table)
        if not statements:
            return []
        results = self.store.q('\n'.join(statements), **where.params(), refs=refs, vector=vector)
        return [to_rows.candidate(table, row) for table, rows in zip(tables, results, strict=True) for row in rows or []]

    def attributes_at(self, refs: list[str], keys: list[str], where: ReadFilter) -> list[Candidate]:
        """Tier-1 structured lookup: current attributes of these entities with these keys."""
        predicate = where.predicate('attribute')
        if predicate is None or not refs or not keys:
            return []
        addresses = [ref_address(r, k) for r in refs for k in keys]
        sql = f'SELECT {PROJECTIONS["attribute"]} FROM attribute WHERE address IN $addresses AND {predicate} LIMIT 32;'
        return self._rows('attribute', sql, {**where.params(), 'addresses': addresses})

    def attribute_keys(self, refs: list[str], where: ReadFilter) -> list[str]:
        predicate = where.predicate('attribute')
        if predicate is None or not refs:
            return []
        sql = f'SELECT VALUE key FROM attribute WHERE entity_ref IN $refs AND {predicate} LIMIT 500;'
        return sorted({str(k) for k in self.store.q(sql, **where.params(), refs=refs)[0] or []})
