"""Set-based lifecycle statements: decay, expiry, trace purge, reinforcement (CONTRACT §5, §9).

Each sweep costs what changes (docs/architecture.md, "Importance and lifecycle"): decay bumps the
context's decay clock and ``importance`` is computed on read (migration 0015); expiry reads the
``expiry_from`` index of open context rows; trace purge walks ``created_at`` forward. Batches hold at
most ``batch`` ids, and a repeated or concurrent run finds nothing left to do.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from agent_memory.db.connection import Database
from agent_memory.db.memory_store import FACT_TABLES
from agent_memory.db.records import Tx
from agent_memory.db.reinforcement import ImportanceRule, reinforce_statement, reinforced_ids
from agent_memory.errors import run_with_retry
from agent_memory.tuning import knobs

# Lower bound of every known-time range scan: index entries of NONE sort before any datetime.
OLDEST = dt.datetime(1, 1, 1, tzinfo=dt.UTC)


# (table, HNSW index) pairs of migration context/0005.
VECTOR_INDEXES = (
    ('attribute', 'attribute_embedding'),
    ('entity', 'entity_embedding'),
    ('memory_chunk', 'memory_chunk_embedding'),
    ('retrieval_trace', 'retrieval_trace_embedding'),
)


class LifecycleStore:
    def __init__(self, db: Database, database: str, importance: ImportanceRule, batch: int | None = None) -> None:
        self.db = db
        self.database = database
        self.importance = importance
        self.batch = knobs().sweep_batch if batch is None else batch

    def _drain(self, statement: str, **params: object) -> int:
        """Repeat one batched statement until it affects fewer than a batch; return the rows it touched."""
        total = 0
        while True:
            affected = run_with_retry(lambda: self.db.query(self.database, statement, {**params, 'batch': self.batch})[-1])
            total += int(affected or 0)
            if not affected or affected < self.batch:
                return total

    def decay(self, day: str | None) -> int:
        """One decay step: bump the context's decay clock (O(1)); ``day`` makes the step once per calendar day.

        Returns the facts whose importance the step lowered (those in the rule's decaying categories), counted on
        the category indexes; no fact row is written.
        """
        stepped = run_with_retry(
            lambda: self.db.query(
                self.database,
                'UPDATE lifecycle_clock:decay SET decay_epoch += 1, scheduled_day = $day ?? scheduled_day '
                'WHERE $day IS NONE OR scheduled_day != $day RETURN VALUE decay_epoch;',
                {'day': day},
            )[-1]
        )
        if not stepped:
            return 0
        counts = [
            f'(SELECT count() FROM {table} WHERE memory_category = "{category}" GROUP ALL)[0].count ?? 0'
            for table in FACT_TABLES
            for category in self.importance.decaying
        ]
        return int(self.db.query(self.database, f'RETURN math::sum([{", ".join(counts)}]);')[-1] or 0)

    def expire(self, now: dt.datetime, cutoff: dt.datetime) -> int:
        """Context-category attributes and actions with no own ``valid_until``, known before ``cutoff``, end now.

        ``expiry_from`` (migration 0015) indexes exactly the open context rows and drops a row once it has a
        ``valid_until``, so each batch reads only rows that are due. The ids are selected first: an UPDATE
        must not filter on an indexed field it changes (engine quirk, docs/architecture.md).
        """
        total = 0
        for table in ('attribute', 'action'):
            total += self._drain(
                'LET $due = SELECT VALUE id FROM type::table($table) WHERE expiry_from >= $oldest AND expiry_from < $cutoff '
                'LIMIT $batch; '
                'RETURN array::len((UPDATE $due SET valid_until = $now WHERE valid_until IS NONE RETURN VALUE 1));',
                table=table,
                cutoff=cutoff,
                now=now,
                oldest=OLDEST,
            )
        return total

    def purge_traces(self, cutoffs: dict[str, dt.datetime]) -> int:
        """Delete traces older than their cutoff, walking the ``created_at`` index forward from the last batch."""
        total = 0
        for table, cutoff in cutoffs.items():
            start = OLDEST
            while True:
                deleted, last = run_with_retry(
                    lambda table=table, cutoff=cutoff, start=start: self.db.query(
                        self.database,
                        'LET $rows = SELECT id, created_at FROM type::table($table) WHERE created_at >= $start '
                        'AND created_at < $cutoff ORDER BY created_at LIMIT $batch; '
                        'DELETE $rows.id; '
                        'RETURN [array::len($rows), $rows[-1].created_at];',
                        {'table': table, 'cutoff': cutoff, 'start': start, 'batch': self.batch},
                    )[-1]
                )
                total += int(deleted)
                if deleted < self.batch:
                    break
                start = last
        return total

    def purge_vector_changes(self, cutoff: dt.datetime) -> int:
        """Forget deletions recorded before ``cutoff`` (context migration 0021): processes that last looked before it
        read their vectors again (db/local_vectors.py). Walks the ``at`` index; one statement per batch."""
        total = 0
        while True:
            deleted = run_with_retry(
                lambda: self.db.query(
                    self.database,
                    'LET $rows = SELECT VALUE id FROM vector_gone WHERE at < $cutoff LIMIT $batch; DELETE $rows; RETURN array::len($rows);',
                    {'cutoff': cutoff, 'batch': self.batch},
                )[-1]
            )
            total += int(deleted)
            if deleted < self.batch:
                return total

    def reinforce(self, refs: Iterable[tuple[str, Any]]) -> int:
        """Multiply the current importance by the reinforcement factor (capped) for every (table, id) in one statement;
        retried on conflict."""
        ids = reinforced_ids(refs)
        if not ids:
            return 0
        tx = Tx()
        sql = f'RETURN array::len(({reinforce_statement(tx, ids, self.importance)} RETURN VALUE 1));'
        result = run_with_retry(lambda: self.db.query(self.database, sql, tx.params))
        return int(result[0] or 0)

    def vector_index_growth(self) -> dict[str, tuple[int, int]]:
        """Per vector table: (rows now, rows at the last rebuild of its HNSW index)."""
        statements = [f'(SELECT count() FROM {table} GROUP ALL)[0].count ?? 0' for table, _ in VECTOR_INDEXES]
        sql = f'RETURN [{", ".join(statements)}]; SELECT record::id(id) AS table, rows_at_rebuild FROM vector_index;'
        counts, state = self.db.query(self.database, sql)
        rebuilt = {row['table']: int(row['rows_at_rebuild']) for row in state or []}
        return {table: (int(n), rebuilt.get(table, 0)) for (table, _), n in zip(VECTOR_INDEXES, counts, strict=True)}

    def rebuild_vector_index(self, table: str, rows: int, now: dt.datetime) -> None:
        """Rebuild one HNSW index (3.2 answers rows inserted after its last build at brute-force cost)."""
        index = dict(VECTOR_INDEXES)[table]
        self.db.query(
            self.database,
            f'REBUILD INDEX {index} ON {table}; '
            'UPSERT type::record("vector_index", $table) SET rows_at_rebuild = $rows, rebuilt_at = $now;',
            {'table': table, 'rows': rows, 'now': now},
        )
