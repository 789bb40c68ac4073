"""SurrealQL for the read path (CONTRACT §7): ranked candidate lists, graph expansion, seeds.

Each candidate query applies the caller's visibility predicate and the time filter inside the
database and returns at most ``limit`` rows, so the candidate pool stays bounded whatever the
size of the context. Vector lists rank passages and facts in the process where their table fits
(``db/local_vectors.py``) and use the HNSW indexes (``<|k,ef|>``) otherwise; text lists use BM25.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.lexical_score import ANALYZER, end_sample, idf, in_query_scoring, mean_length_probe, scored_select
from agent_memory.db.local_text import ANALYSED
from agent_memory.db.local_vectors import LocalVectors, held_local_vectors, local_key, local_vectors_of, record_key
from agent_memory.db.memory_store import (
    CURRENT,
    CURRENT_EDGE,
    INSIDE_FORGET,
    TOUCHES_FORGET,
    VISIBLE,
    MemoryStore,
    visibility_params,
)
from agent_memory.db.records import Tx, rid
from agent_memory.db.term_frequencies import TermFrequencies, frequencies_of
from agent_memory.rows.candidates import Candidate
from agent_memory.rows.reads import Expanded, Expansion, FoundLists, ListLookup, ReadFilter
from agent_memory.tuning import knobs


def _source(table: str) -> str:
    """The source row of a lean mirror's row."""
    return f"type::record('{table}', record::id(id))"


def _name(link: str) -> str:
    """The display name of the entity ``link`` points at, from its lean mirror."""
    return f"type::record('entity_lean', record::id({link})).name"


# Every projection carries scope_sets: a reply built from these rows is stored no wider (domain/derived_scope.py).
# No projection fetches an entity row (it carries an embedding, which the engine decodes whole): a fact's entity name
# comes from the entity's lean mirror and its type from the entity's id (``[type, normalised name]``).
PROJECTIONS = {
    # turn (facts): the turn a fact was extracted from, so fusion credits the passage that said it (domain/retrieval.py)
    'attribute': f'id, key, value, importance, created_at, scope_sets, entity, {_name("entity")} AS entity_name, '
    'record::id(entity)[0] AS entity_type, source_turn AS turn',
    'entity': 'id, name, type, importance, created_at, scope_sets',
    # spoken_at: when the turn was said (its ts); seq: the turn's place in its session (adjacent turns)
    'memory_chunk': 'id, text, created_at, role, session, turn, scope_sets, turn.observed_at AS spoken_at, turn.seq AS seq, '
    'turn.speaker AS speaker, turn.principal AS principal',
    'relates_to': f'id, in, out, label, importance, created_at, scope_sets, {_name("in")} AS in_name, {_name("out")} AS out_name, '
    'source_turn AS turn',
    'action': f'id, summary, actor, object, object_text, verb, importance, created_at, occurred_at, scope_sets, '
    f'{_name("actor")} AS actor_name, source_turn AS turn',
}
# Lean mirrors (context migration 0018): the source row's fields without its embedding or importance, under the source
# row's id. A BM25 match reads every matching row whole, so text lists, counts and other reads that need no vector read
# these; the importance of the rows a statement returns is read from their source rows (after its LIMIT).
LEAN = {'attribute': 'attribute_lean', 'entity': 'entity_lean', 'memory_chunk': 'memory_chunk_lean'}
LEAN_PROJECTIONS = {
    'attribute': f'{_source("attribute")} AS id, {_source("attribute")}.importance AS importance, key, value, created_at, '
    'scope_sets, entity, entity_name, record::id(entity)[0] AS entity_type, source_turn AS turn',
    'entity': f'{_source("entity")} AS id, {_source("entity")}.importance AS importance, name, type, created_at, scope_sets',
    'memory_chunk': f'{_source("memory_chunk")} AS id, text, created_at, role, session, turn, scope_sets, '
    'turn.observed_at AS spoken_at, turn.seq AS seq, turn.speaker AS speaker, turn.principal AS principal',
}
TEXT_FIELDS = {'attribute': 'search_text', 'entity': 'name', 'memory_chunk': 'text'}
VECTOR_TABLES = ('attribute', 'entity', 'memory_chunk')


def searched(table: str) -> str:
    """The table a text list or a count of ``table`` reads: its lean mirror where it has one."""
    return LEAN.get(table, table)


def lean_projection(table: str) -> str:
    return LEAN_PROJECTIONS.get(table) or PROJECTIONS[table]


ROWS = ''  # term_counts' key for a table's row count (no query term is empty)
MEAN_LENGTH = ' mean length'  # ... and for its rows' mean analysed length, in thousandths (no query term holds a space)


def filter_params(where: ReadFilter) -> dict[str, Any]:
    """The bound SQL parameters of a filter (the names ``where_clause`` uses)."""
    return {
        **visibility_params(where.patterns),
        'now': where.now,
        'as_of': where.as_of,
        'vf': where.valid_from,
        'vu': where.valid_until,
        'sid': where.session_id,
        'in_session': rid('session', where.session_id) if where.session_id else None,
        'labels': list(where.labels),
        **visibility_params(where.forget_region or [], 'fg'),
    }


def where_clause(where: ReadFilter, table: str) -> str | None:
    """The WHERE clause for ``table``; None when no row of it can match (e.g. labels on graph rows)."""
    clauses = [VISIBLE]
    if where.forget_region is not None:
        clauses.append(TOUCHES_FORGET if table == 'entity' else INSIDE_FORGET)
    if table == 'memory_chunk':
        if where.as_of:
            clauses.append('created_at <= $as_of')
        if where.session_id:
            clauses.append('session = $in_session')
        if where.labels:
            clauses.append('labels CONTAINSALL $labels')
        return ' AND '.join(clauses)
    if where.labels:
        return None  # labels are stamped on passages only; graph rows never carry them
    if table == 'entity':
        if where.session_id:
            return None
        if where.as_of:
            clauses.append('created_at <= $as_of')
        return ' AND '.join(clauses)
    if where.as_of:
        clauses.append('created_at <= $as_of AND valid_from <= $as_of AND (valid_until IS NONE OR valid_until > $as_of)')
    elif where.valid_from or where.valid_until:
        if where.valid_from:
            clauses.append('(valid_until IS NONE OR valid_until > $vf)')
        if where.valid_until:
            clauses.append('valid_from < $vu')
    else:
        clauses.append(CURRENT_EDGE if table == 'relates_to' else CURRENT)
    if where.session_id:
        clauses.append('source.session_id = $sid')
    return ' AND '.join(clauses)


@dataclass(frozen=True)
class TermPlan:
    """How one table's lexical list uses the query's terms."""

    rare: tuple[str, ...]  # in at most df_cap rows (or unknown to the table): each its own scored OR branch
    together: tuple[tuple[str, ...], ...]  # common terms, ANDed: "dana", "ray" and "editor" are each in thousands of
    # rows of a large context, their intersection in one; matching each alone would cost every row it is in


def scoreless(count: int, rows: int) -> bool:
    """A term in at least half of a table's rows scores 0 there (3.2 clamps a BM25 IDF ≤ 0), so it can neither rank a
    row nor keep one in the list: the two speakers' names of a conversation. ``count`` is capped (``term_counts``); a
    term counted in no row is never scoreless. In a table of at most ``df_cap`` rows no term is: searching is cheap
    there, and a context of a few rows, each word in half of them, would otherwise find nothing (its rows come back at
    score 0, ``lexical``)."""
    return count > 0 and 2 * count >= rows and rows > knobs().df_cap


def plan_terms(terms: Sequence[str], counts: dict[str, int], rows: int) -> TermPlan:
    """Terms that cannot score in this table of ``rows`` rows are left out (``scoreless``). Selective terms are ORed
    and scored; the common ones (in more than ``df_cap`` rows, agent_memory/tuning.py) are searched for only together,
    as one AND branch, when there are several of them or nothing else to search for. A single common term beside
    selective ones is left out: alone it would match (and cost) every row it is in and rank nothing the selective
    terms do not. Dropping every common term instead would leave a question naming a person and a key in a large
    context with nothing to match."""
    cap = knobs().df_cap
    scoring = [t for t in terms if not scoreless(counts[t], rows)]
    rare = tuple(t for t in scoring if counts[t] <= cap)
    common = tuple(t for t in scoring if counts[t] > cap)
    together = (common,) if len(common) > 1 or (common and not rare) else ()
    return TermPlan(rare, together)


def query_words(terms: Sequence[str]) -> list[str]:
    """The distinct non-empty query terms a text list searches for, in order, at most ``max_terms``."""
    return [t for t in dict.fromkeys(terms) if t][: knobs().max_terms]


def lexical(found: dict[str, list[Candidate]]) -> dict[str, list[Candidate]]:
    """3.2 clamps a term's score to 0 when the term is in about half the rows or more (a speaker's name in a
    conversation), so such a term adds nothing to the order; rows that match only such terms come last and are
    dropped whenever some row scored above 0 (they are no lexical evidence, only noise in the fusion)."""
    return {table: [r for r in rows if (r.bm25 or 0) > 0] or rows for table, rows in found.items()}


VectorStatements = tuple[dict[str, str], dict[str, Any], dict[str, dict[str, float]]]  # statements, params, distances


Measure = tuple[str, dict[str, float]]  # a list ranked in the process: the Candidate field and each key's value


def measured(table: str, rows: list[dict[str, Any]] | None, measure: Measure | None = None) -> list[Candidate]:
    """A list's rows as candidates; a list ranked in the process carries the distances or BM25 scores found there
    (its rows come back in that order), set on each row before it becomes a (frozen) candidate."""
    if measure is None:
        return [to_rows.candidate(table, row) for row in rows or []]
    field_, values = measure
    return [to_rows.candidate(table, {**row, field_: values[local_key(row['id'].id)]}) for row in rows or []]


@dataclass(frozen=True)
class LocalText:
    """A text list ranked in the process: its statement over the first candidates (``$lex_<table>``), every matching
    row's score, and the matching rows after those candidates, best first, for when the filter keeps too few."""

    statement: str
    scores: dict[str, float]
    first: list[Any]
    rest: list[Any]


@dataclass(frozen=True)
class SearchedHere:
    """The rows this process holds for a context (``db/local_vectors.py``), the tables whose texts it can search now and
    those whose vectors too."""

    held: LocalVectors | None = None
    tables: frozenset[str] = frozenset()
    vector_tables: frozenset[str] = frozenset()


class RetrievalStore:
    def __init__(self, store: MemoryStore, frequencies: TermFrequencies | None = None) -> None:
        self.store = store
        self.frequencies = frequencies or frequencies_of(store)

    def _rows(self, table: str, sql: str, params: dict[str, Any]) -> list[Candidate]:
        return [to_rows.candidate(table, row) for row in self.store.q(sql, **params)[0] or []]

    def vector(self, table: str, vector: list[float], limit: int, where: ReadFilter) -> list[Candidate]:
        return self.vector_lists({table: limit}, vector, where)[table]

    def vector_lists(self, limits: dict[str, int], vector: list[float], where: ReadFilter) -> dict[str, list[Candidate]]:
        """Nearest rows by cosine per table, every table in one round trip (``_vector_statements``)."""
        statements, params, distances = self._vector_statements(limits, where, vector)
        measures = {table: ('distance', found) for table, found in distances.items()}
        return self._statements(limits, statements, {**filter_params(where), **params, 'vector': vector}, measures)

    def text(self, table: str, terms: Sequence[str], limit: int, where: ReadFilter) -> list[Candidate]:
        return self.text_lists({table: limit}, terms, where)[table]

    def text_lists(self, limits: dict[str, int], terms: Sequence[str], where: ReadFilter) -> dict[str, list[Candidate]]:
        """BM25 per table, best first (``_text_statements``). At most two round trips whatever the number of tables:
        the document-frequency probe (skipped when every count is known), then the lists."""
        statements, params, _ = self._text_statements(limits, query_words(terms), where, SearchedHere())
        return lexical(self._statements(limits, statements, {**filter_params(where), **params}))

    def lists(self, where: ReadFilter, limits: dict[str, int], lookup: ListLookup) -> FoundLists:
        """Every first-stage list of a retrieval in one round trip (after the look at what changed, ``_here``, and the
        document-frequency probe when a term is new to a table searched in the database): the vector lists, the text
        lists and the caller's self entities. None of them depends on another."""
        statements: dict[str, str] = {}
        params: dict[str, Any] = {**filter_params(where), 'vector': lookup.vector, 'principal': lookup.principal}
        distances: dict[str, dict[str, float]] = {}
        ranked_here: dict[str, LocalText] = {}
        terms = query_words(lookup.terms) if lookup.terms is not None else []
        here = self._here(where, limits, lookup.vector, terms) if lookup.vector is not None or terms else SearchedHere()
        if lookup.vector is not None:
            # fusion drops a fact or entity less similar than its floor: a candidate ranked here below it is not read
            floors = {name.split(':', 1)[1]: floor for name, floor in knobs().similarity_floor.items() if name.startswith('vector:')}
            vector_statements, vector_params, distances = self._vector_statements(limits, where, lookup.vector, floors, here)
            statements |= {f'vector:{t}': sql for t, sql in vector_statements.items()}
            params |= vector_params
        if lookup.terms is not None:
            text, words, ranked_here = self._text_statements(limits, terms, where, here)
            statements |= {f'bm25:{t}': sql for t, sql in text.items()}
            params |= words
        if lookup.principal is not None and (predicate := where_clause(where, 'entity')) is not None:
            statements['self'] = (
                f'SELECT {lean_projection("entity")} FROM entity_lean WHERE self_principal = $principal AND {predicate} LIMIT 4;'
            )
        results = self.store.q('\n'.join(statements.values()), **params) if statements else []
        measures: dict[str, Measure] = {f'vector:{t}': ('distance', d) for t, d in distances.items()}
        measures |= {f'bm25:{t}': ('bm25', local.scores) for t, local in ranked_here.items()}
        found = {name: measured(name.rsplit(':', 1)[-1] if name != 'self' else 'entity', rows, measures.get(name))
                 for name, rows in zip(statements, results, strict=True)}  # fmt: skip
        texts = {t: found.get(f'bm25:{t}', []) for t in limits}
        self._more_text(where, limits, texts, ranked_here)
        return FoundLists(
            vector={t: found.get(f'vector:{t}', []) for t in limits} if lookup.vector is not None else {},
            text=lexical(texts) if lookup.terms is not None else {},
            self_entities=found.get('self', []),
        )

    def _here(self, where: ReadFilter, limits: dict[str, int], vector: Sequence[float] | None, words: Sequence[str]) -> SearchedHere:
        """The tables of ``limits`` this process can rank itself, brought up to date in one round trip, with ``words``
        analysed in it. A search by words alone uses what a search by meaning made the process hold.

        Never on a hosted database: there a process is one of many short-lived instances, and warming a copy costs more
        than it returns (docs/search-decision.md: at 1 ms a round trip and 8 instances, /query p95 0.63 s with every list
        in the database against 7.8 s with the copy, and 82 KB a query against 1.4 MB)."""
        if self.store.db.hosted:
            return SearchedHere(None)
        held = local_vectors_of(self.store, len(vector)) if vector is not None else held_local_vectors(self.store)
        tables = [table for table in limits if where_clause(where, table) is not None]
        if held is None or not tables:
            return SearchedHere(held)
        ready = held.ready(self.store, tables, words if knobs().local_text else ())
        return SearchedHere(held, frozenset(ready), frozenset(table for table, vectors in ready.items() if vectors))

    def _vector_statements(
        self,
        limits: dict[str, int],
        where: ReadFilter,
        vector: Sequence[float],
        floors: dict[str, float] | None = None,
        here: SearchedHere | None = None,
    ) -> VectorStatements:
        """Per table: its statement, their parameters, and for a table searched in the process its candidates' distances.

        Passages and facts are ranked in the process where their table fits (``local_vectors``): the statement then
        reads the nearest candidates' lean rows in order of distance, applies the request's filter and keeps ``limit``.
        Otherwise the KNN runs in the database, unfiltered, and the filter applies to its result: on 3.2 a predicate
        inside the KNN is evaluated per scanned row, which costs far more. Either way ``overfetch`` ×
        ``limit`` candidates are taken and filtered down to ``limit``. The neighbours leave the KNN without their
        embedding (``OMIT``): nothing after it reads the vector, and copying it per neighbour into the outer SELECT
        is not free. When the filter keeps every row
        (``ReadFilter.keeps_every``) ``limit`` candidates are taken: a KNN reads each neighbour whole, embedding
        included, and the spares would all be cut. A candidate ranked in the process whose similarity is
        below its table's ``floors`` is not read: a fact's importance comes from its whole row. Uses
        ``$vector``."""
        tuned = knobs()
        tables = {table: predicate for table in limits if (predicate := where_clause(where, table)) is not None}
        here = here or self._here(where, limits, vector, ())
        vectors, local = here.held, here.vector_tables
        statements, params, distances = {}, {}, {}
        for table, predicate in tables.items():
            limit = limits[table]
            k = limit if where.keeps_every(table) else math.ceil(limit * tuned.overfetch)
            if vectors is not None and table in local:
                floor = (floors or {}).get(table)
                near = vectors.nearest(table, vector, k)
                near = [(key, distance) for key, distance in near if floor is None or 1.0 - distance >= floor]
                params[f'near_{table}'] = [rid(LEAN[table], record_key(table, key)) for key, _ in near]
                distances[table] = dict(near)
                statements[table] = (
                    f'SELECT {lean_projection(table)} FROM (SELECT * FROM $near_{table} WHERE {predicate} LIMIT {int(limit)});'
                )
                continue
            knn = f'<|{min(tuned.ef_search, k)},{tuned.ef_search}|>'
            statements[table] = (
                f'SELECT {PROJECTIONS[table]}, distance FROM '
                f'(SELECT *, vector::distance::knn() AS distance OMIT embedding FROM {table} WHERE embedding {knn} $vector) '
                f'WHERE distance IS NOT NONE AND {predicate} ORDER BY distance LIMIT {int(limit)};'
            )
        return statements, params, distances

    def _text_statements(
        self, limits: dict[str, int], terms: Sequence[str], where: ReadFilter, here: SearchedHere
    ) -> tuple[dict[str, str], dict[str, Any], dict[str, LocalText]]:
        """One ``@n@`` per selective term (OR semantics: a row's score is the sum of its terms' scores) and the common
        terms ANDed into one more branch (``plan_terms``), per table; the statements, their parameters and the tables
        ranked in the process (``_local_text``). In the database each is ranked by BM25
        from whichever costs less (``in_query_scoring``): the engine's ``search::score`` (a pass over the index's whole
        write log per branch) or the same formula computed from the matching rows' text (``lexical_score``)."""
        predicates = {table: where_clause(where, table) for table in limits} if terms else {}
        statements: dict[str, str] = {}
        params: dict[str, Any] = {}
        ranked_here: dict[str, LocalText] = {}
        for table, predicate in list(predicates.items()):
            if predicate is not None and here.held is not None and table in here.tables and knobs().local_text:
                local = self._local_text(here.held, table, terms, predicate, limits[table], where)
                if local is not None:
                    del predicates[table]
                    ranked_here[table], params[f'lex_{table}'] = local, local.first
                    if local.statement:
                        statements[table] = local.statement
        counts = self.term_counts([t for t, p in predicates.items() if p is not None], terms)
        for table, predicate in predicates.items():
            if predicate is None:
                continue
            rows, df = counts[(table, ROWS)], {t: counts[(table, t)] for t in terms}
            plan = plan_terms(terms, df, rows)
            field_ = TEXT_FIELDS[table]
            branches = [*((t,) for t in plan.rare), *plan.together]
            if not branches:
                continue  # every term is scoreless here: no row would be lexical evidence
            # @i@ numbers this statement's matches (for search::score(i)); a branch of several words is their AND
            for i, words in enumerate(branches, start=1):
                params[f'{table}_{i}'] = ' '.join(words)
            clauses = ' OR '.join(f'{field_} @{i}@ ${table}_{i}' for i in range(1, len(branches) + 1))
            match = f'({clauses}) AND {predicate}'
            if in_query_scoring(plan, df, rows):
                idfs = [idf(df[w], rows) for branch in branches for w in branch]
                sql, words_ = scored_select(
                    searched(table), field_, match, lean_projection(table), limits[table], branches, idfs, f'{table}_'
                )  # fmt: skip
                statements[table] = sql
                params |= words_ | {f'{table}_length': max(counts[(table, MEAN_LENGTH)] / 1000, 1.0)}
                continue
            # projected after the LIMIT: the importance comes from each returned row's source row (with its embedding)
            score = ' + '.join(f'search::score({i})' for i in range(1, len(branches) + 1))
            statements[table] = (
                f'SELECT {lean_projection(table)}, bm25 FROM (SELECT *, {score} AS bm25 FROM {searched(table)} '
                f'WHERE {match} ORDER BY bm25 DESC LIMIT {int(limits[table])}) ORDER BY bm25 DESC;'
            )
        return statements, params, ranked_here

    def _local_text(
        self, held: LocalVectors, table: str, terms: Sequence[str], predicate: str, limit: int, where: ReadFilter
    ) -> LocalText | None:
        """``table``'s text list ranked in the process (``db/local_text.py``): the terms planned as in the database
        (``plan_terms``, with exact counts), the best ``overfetch`` × ``limit`` matching rows read with the request's
        filter in order of score and cut to ``limit`` (``_more_text`` reads on when the filter keeps fewer). The
        statement is '' when no row matches a term that can score. None when a term's analysis is not known yet or the table holds no rows
        (the database ranks)."""
        analysed = ANALYSED.known(terms)
        if len(analysed) < len(terms):
            return None

        def branches(df: dict[str, int], rows: int) -> list[tuple[str, ...]]:
            plan = plan_terms(terms, df, rows)
            return [*((t,) for t in plan.rare), *plan.together]

        k = limit if where.keeps_every(table) else math.ceil(limit * knobs().overfetch)
        ranked = held.text_search(table, analysed, branches, k + knobs().local_text_read_on)
        if ranked is None:
            return None  # evicted since the look (another context's table needed the budget), or empty: the database ranks
        if not ranked:
            return LocalText('', {}, [], [])
        ids = [rid(LEAN[table], record_key(table, key)) for key, _ in ranked]
        statement = f'SELECT {lean_projection(table)} FROM (SELECT * FROM $lex_{table} WHERE {predicate} LIMIT {int(limit)});'
        return LocalText(statement, dict(ranked), ids[:k], ids[k:])

    def _more_text(self, where: ReadFilter, limits: dict[str, int], found: dict[str, list[Candidate]], here: dict[str, LocalText]) -> None:
        """Text lists ranked in the process whose filter kept fewer than their limit of the first candidates read on
        through the other matching rows, best first, in one round trip: the list is then the best ``limit`` rows the
        caller may read, as the database's full-text list gives them (a narrowly scoped caller, a session or a time),
        among the next ``local_text_read_on`` matching rows."""
        short = {t: local for t, local in here.items() if local.rest and len(found.get(t, [])) < limits[t]}
        if not short:
            return
        statements = [
            f'SELECT {lean_projection(t)} FROM (SELECT * FROM $more_{t} WHERE {where_clause(where, t)} '
            f'LIMIT {int(limits[t] - len(found.get(t, [])))});'
            for t in short
        ]
        results = self.store.q('\n'.join(statements), **filter_params(where), **{f'more_{t}': local.rest for t, local in short.items()})
        for (table, local), rows in zip(short.items(), results, strict=True):
            found[table] = found.get(table, []) + measured(table, rows, ('bm25', local.scores))

    def term_counts(self, tables: Sequence[str], terms: Sequence[str]) -> dict[tuple[str, str], int]:
        """(table, term) → rows of the table holding the term, (table, ``ROWS``) → the table's rows and (table,
        ``MEAN_LENGTH``) → their mean analysed length in thousandths of a token (``lexical_score``). A term is counted
        up to ``df_cap`` + 1 (more is "common") or, in a table of at most twice that, up to half the table (that many is
        ``scoreless``); in a larger table a common term whose first match scores 0 is recorded as in half the rows (3.2
        scores 0 exactly then). Counts come from ``self.frequencies`` when fresh; the others are probed in one round trip.

        Counting a term reads every matching row whole, embedding included, so the table's size is ``count()`` (no row
        is read) and remembered too. An engine score costs in proportion to the table's rows (``lexical_score``), so in a
        table of more than ``half_sample_above`` rows a common term is scored only when a sample shows it could be in half the
        rows (``_scoreless_among``)."""
        cap = knobs().df_cap
        keys = [(table, term) for table in tables for term in (ROWS, MEAN_LENGTH, *terms)]
        counts = self.frequencies.known(keys)
        missing = [k for k in keys if k not in counts]
        if missing:
            sizes = ''.join(
                (
                    f'LET $n_{table} = {counts[(table, ROWS)]};'
                    if (table, ROWS) in counts
                    else f'LET $n_{table} = (SELECT count() FROM {searched(table)} GROUP ALL)[0].count ?? 0;'
                )
                + f' LET $half_{table} = <int> math::ceil(<float> $n_{table} / 2);'
                + f' LET $l_{table} = math::min([{cap + 1}, $half_{table}]);\n'
                for table in dict.fromkeys(t for t, _ in missing)
            )
            probes = ', '.join(_probe(table, term, f'$t{i}', cap) for i, (table, term) in enumerate(missing))
            params = {f't{i}': term for i, (_, term) in enumerate(missing) if term not in (ROWS, MEAN_LENGTH)}
            found = self.store.q(f'{sizes}RETURN [{probes}];', **params)[-1] or []
            probed = {key: _as_count(key, value) for key, value in zip(missing, found, strict=True)}
            sizes_of = {table: probed.get((table, ROWS), counts.get((table, ROWS), 0)) for table, _ in missing}
            sampled = [
                key for key, value in probed.items()
                if key[1] not in (ROWS, MEAN_LENGTH) and value == cap + 1 and sizes_of[key[0]] > _scored_up_to()
            ]  # fmt: skip
            for key in self._scoreless_among(sampled):
                probed[key] = -(-sizes_of[key[0]] // 2)
            self.frequencies.remember(probed)
            counts.update(probed)
        return counts

    def _scoreless_among(self, keys: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
        """The common (table, term)s that are in half their table's rows or more, in one round trip. A term is scored by
        the engine (its score is 0 exactly then: ``_term_probe``) only when it is in at least ``half_sample_share`` of
        the first or of the last ``lexical_score.END_SAMPLE`` rows of the table in id order: a term spread over half
        the rows is in ~50 % ± 4.4 % of 128 rows (35 % is 3.4 standard deviations below, at both ends at once far more),
        and ids start with their creation time, so a term that fills the recent (or the early) half of a context's
        history fills one end. The two ends cost the same whatever the table's size. A term in half the rows but in
        neither end (the middle of the history; for entities, whose ids are type and name, neither end of that order)
        is kept as common (docs/architecture.md, "Retrieval")."""
        if not keys:
            return []
        tables = list(dict.fromkeys(table for table, _ in keys))
        statements = [
            f'LET ${end}_{table} = {end_sample(searched(table), TEXT_FIELDS[table], newest=end == "new")};'
            for table in tables
            for end in ('old', 'new')
        ]
        share = knobs().half_sample_share
        checks = []
        for i, (table, _) in enumerate(keys):
            statements.append(f"LET $a{i} = search::analyze('{ANALYZER}', $t{i});")
            frequent = ' OR '.join(
                f'count((SELECT VALUE 1 FROM ${end}_{table} WHERE $a{i} ALLINSIDE toks)) >= {share} * array::len(${end}_{table})'
                for end in ('old', 'new')
            )
            checks.append(f'IF {frequent} THEN {_scores_zero(table, f"$t{i}")} ELSE false END')
        found = self.store.q(f'{" ".join(statements)} RETURN [{", ".join(checks)}];', **{f't{i}': t for i, (_, t) in enumerate(keys)})
        return [key for key, zero in zip(keys, found[-1] or [], strict=True) if zero]

    def _statements(
        self, tables: Iterable[str], statements: dict[str, str], params: dict[str, Any], measures: dict[str, Measure] | None = None
    ) -> dict[str, list[Candidate]]:
        """Run one SELECT per table in a single round trip; tables without a statement get no rows."""
        results = self.store.q('\n'.join(statements.values()), **params) if statements else []
        found = {table: measured(table, rows, (measures or {}).get(table)) for table, rows in zip(statements, results, strict=True)}
        return {table: found.get(table, []) for table in tables}

    def addressed(self, where: ReadFilter, owners: Sequence[str], labels: Sequence[str], keys: Sequence[str]) -> list[Candidate]:
        """Tier 1 for a question with an address (``domain/asked.py``), in one round trip: the visible current relations
        labelled ``labels`` leaving ``owners`` (entity refs), and the attributes with ``keys`` of the owners and of the
        entities those relations reach."""
        relations, attributes = where_clause(where, 'relates_to'), where_clause(where, 'attribute')
        if relations is None or attributes is None or not owners:
            return []
        edges = f'FROM relates_to WHERE in_ref IN $owners AND label IN $edge_labels AND {relations} LIMIT 20'
        rows = self.store.q(
            f'LET $reached = SELECT VALUE out_ref {edges};'
            f'SELECT {PROJECTIONS["relates_to"]} {edges};'
            f'SELECT {lean_projection("attribute")} FROM attribute_lean WHERE entity_ref IN array::concat($owners, $reached) '
            f'AND key IN $keys AND {attributes} LIMIT 40;',
            **filter_params(where),
            owners=list(owners),
            edge_labels=list(labels),
            keys=list(keys),
        )
        return [to_rows.candidate('relates_to', r) for r in rows[1] or []] + [to_rows.candidate('attribute', r) for r in rows[2] or []]

    def expand(self, where: ReadFilter, lookup: Expansion, vector: list[float] | None) -> Expanded:
        """The second stage of a retrieval in one round trip: the facts of the seed entities and of their 1-hop and
        2-hop neighbours over visible relations (``lookup.depths`` rows per table and depth; at most 64 new
        neighbours a hop), the tier-1 attributes of the named entities whose key shares a part with ``lookup.parts``,
        and the first passage of the turns just before and after each of ``lookup.turns`` (session key, seq)."""
        tx = Tx()
        statements, kinds = ['LET $seen = [];'], ['']
        frontier = tx.p(list(lookup.seeds))
        relations = where_clause(where, 'relates_to')
        for depth, limit in enumerate(lookup.depths if lookup.seeds else ()):
            hop = f'$h{depth}'
            statements += [f'LET {hop} = array::slice(array::complement(array::distinct({frontier}), $seen), 0, 64);']
            statements += [f'LET $seen = array::concat($seen, {hop});']
            kinds += ['', '']
            for table, sql in _facts_about(hop, limit, where).items():
                statements.append(sql if depth == 0 else _unless_empty(hop, sql))
                kinds.append(table)
            if relations is None or depth + 1 == len(lookup.depths):
                break
            frontier = (
                f'IF array::len({hop}) > 0 {{ array::concat('
                f'(SELECT VALUE out_ref FROM relates_to WHERE in_ref IN {hop} AND {relations} LIMIT 128), '
                f'(SELECT VALUE in_ref FROM relates_to WHERE out_ref IN {hop} AND {relations} LIMIT 128)) }} ELSE {{ [] }}'
            )
        attributes = where_clause(where, 'attribute')
        if lookup.named and lookup.parts and attributes is not None:
            statements.append(
                f'SELECT {lean_projection("attribute")} FROM attribute_lean '
                f'WHERE entity_ref IN {tx.p(list(lookup.named))} AND {attributes} '
                f"AND string::split(key, '_') ANYINSIDE {tx.p(sorted(lookup.parts))} LIMIT 32;"
            )
            kinds.append('tier1')
        passages = where_clause(where, 'memory_chunk')
        if lookup.turns and passages is not None:
            clauses = ' OR '.join(f'(session_key = {tx.p(key)} AND seq IN {tx.p([seq - 1, seq + 1])})' for key, seq in lookup.turns)
            statements.append(f'LET $turns = SELECT VALUE record::id(id) FROM turn WHERE {clauses};')
            kinds.append('')
            statements.append(
                f"SELECT {lean_projection('memory_chunk')} FROM array::map($turns, |$t| type::record('memory_chunk_lean', $t + '_0')) "
                f'WHERE id IS NOT NONE AND {passages};'  # a turn that is no evidence (a /chat reply) has no passage
            )
            kinds.append('adjacent')
        found = Expanded([], [], [])
        if not any(kinds):
            return found
        results = self.store.q('\n'.join(statements), **filter_params(where), **tx.params, vector=vector)
        for kind, rows in zip(kinds, results, strict=True):
            if kind == 'tier1':
                found.tier1.extend(to_rows.candidate('attribute', row) for row in rows or [])
            elif kind == 'adjacent':
                found.adjacent.extend(to_rows.candidate('memory_chunk', row) for row in rows or [])
            elif kind:
                found.graph.extend(to_rows.candidate(kind, row) for row in rows or [])
        return found


def _probe(table: str, term: str, param: str, cap: int) -> str:
    """The expression ``term_counts`` probes ``(table, term)`` with. A table of at most ``cap`` rows is always scored by
    the engine (``in_query_scoring``; its scorer is cheap on so few rows), so its terms and length are not counted: 0."""
    if term == ROWS:
        return f'$n_{table}'
    if term == MEAN_LENGTH:
        return f'IF $n_{table} > {cap} THEN {mean_length_probe(searched(table), TEXT_FIELDS[table])} ELSE 0 END'
    return f'IF $n_{table} > {cap} THEN {_term_probe(table, param, cap)} ELSE 0 END'


def _as_count(key: tuple[str, str], value: Any) -> int:
    """A probed value as ``term_counts`` keeps it: a mean length in thousandths (0 for a table without rows)."""
    if key[1] != MEAN_LENGTH:
        return int(value)
    return round(float(value) * 1000) if math.isfinite(float(value)) else 0


def _term_probe(table: str, term: str, cap: int) -> str:
    """The capped count of ``term`` in ``table`` (``term_counts``), as a SurrealQL expression over ``$n_``/``$l_``/
    ``$half_`` of the table (a block's value is its last expression: a ``RETURN`` in it would end the whole statement)."""
    scored = f'$n_{table} > {2 * cap} AND $n_{table} <= {_scored_up_to()}'  # larger tables: _scoreless_among
    return (
        f'{{ LET $c = count((SELECT id {_matching(table, term)} LIMIT $l_{table})); '
        f'IF $c > {cap} AND {scored} THEN IF {_scores_zero(table, term)} THEN $half_{table} ELSE $c END ELSE $c END }}'
    )


def _matching(table: str, term: str) -> str:
    return f'FROM {searched(table)} WHERE {TEXT_FIELDS[table]} @1@ {term}'


def _scores_zero(table: str, term: str) -> str:
    """Whether ``term``'s first match in ``table`` scores 0: 3.2 clamps a BM25 IDF ≤ 0, so exactly when the term is in
    half the rows or more."""
    return f'(SELECT VALUE search::score(1) {_matching(table, term)} LIMIT 1)[0] = 0'


def _scored_up_to() -> int:
    """The largest table whose common terms the probe scores outright (``term_counts``)."""
    return max(2 * knobs().df_cap, knobs().half_sample_above)


def _unless_empty(hop: str, sql: str) -> str:
    """``sql`` run only when the hop has an entity: a hop past the last relation is empty, and each statement over it
    would still cost the engine a statement's work. Its result is then ``[]``, as it would be.
    (A block that RETURNs the SELECT: ``IF … THEN (SELECT …) ELSE [] END`` gives one row unwrapped, and NONE for none.)"""
    return f'IF array::len({hop}) > 0 {{ RETURN {sql.removesuffix(";")} }} ELSE {{ RETURN [] }};'


def _facts_about(refs: str, limit: int, where: ReadFilter) -> dict[str, str]:
    """Attributes (closest to ``$vector`` first: ``_seed_attributes``), relations and actions (most important first) of
    the entities in the SurrealQL array ``refs``, per table."""
    statements = {}
    for table, condition in (
        ('relates_to', f'(in_ref IN {refs} OR out_ref IN {refs})'),
        ('action', f'(actor_ref IN {refs} OR object_ref IN {refs})'),
    ):
        predicate = where_clause(where, table)
        if predicate is not None:
            statements[table] = (
                f'SELECT {PROJECTIONS[table]} FROM {table} WHERE {condition} AND {predicate} ORDER BY importance DESC LIMIT {int(limit)};'
            )
    if (attributes := where_clause(where, 'attribute')) is not None:
        statements = {'attribute': _seed_attributes(refs, limit, attributes), **statements}
    return statements


def _seed_attributes(refs: str, limit: int, predicate: str) -> str:
    """The current facts of the entities in ``refs``, closest to ``$vector`` first. Ordering by closeness reads every
    one of them with its embedding, and a user's own entity gathers most of a memory's facts. So beyond
    ``seed_facts_exact`` facts (counted on the lean mirror, at most that many read) they are taken among the query's
    ``ef_search`` nearest facts: an unfiltered KNN filtered after (a filter inside the KNN is evaluated per scanned
    row). Bounded by the KNN whatever the entities' size, and a large entity's closest facts are among the nearest
    neighbours; those of a smaller one fall back to exact reads."""
    tuned = knobs()
    cap, k = tuned.seed_facts_exact, tuned.ef_search
    projection = PROJECTIONS['attribute']
    order = f'ORDER BY closeness DESC, importance DESC LIMIT {int(limit)}'
    closeness = 'IF embedding AND $vector THEN vector::similarity::cosine(embedding, $vector) ELSE 0 END AS closeness'
    exact = f'SELECT {projection}, {closeness} FROM attribute WHERE entity_ref IN {refs} AND {predicate} {order}'
    nearest = (
        f'SELECT {projection}, 1 - distance AS closeness FROM '
        f'(SELECT *, vector::distance::knn() AS distance OMIT embedding FROM attribute WHERE embedding <|{k},{k}|> $vector) '
        f'WHERE distance IS NOT NONE AND entity_ref IN {refs} AND {predicate} {order}'
    )
    many = f'count((SELECT id FROM attribute_lean WHERE entity_ref IN {refs} AND {predicate} LIMIT {cap + 1})) > {cap}'
    return f'IF $vector AND {many} {{ RETURN {nearest} }} ELSE {{ RETURN {exact} }};'
