"""Set-based lifecycle statements: decay, expiry, trace purge, reinforcement (CONTRACT §5, §9).

Each sweep is a handful of SurrealQL statements run in bounded batches: one statement updates
up to ``batch`` rows selected by the sweep's own predicate, so a batch never holds more than
``batch`` rows in memory and a repeated or concurrent run finds nothing left to do.

Measured (bench/lifecycle.py): linear-ish to 100k rows, N^1.67 to 1M (374 s at 1M, 42% of a Lambda's
limit) because each batch re-walks rows earlier batches finished. A record-id keyset was tried and was
slower: SurrealDB 3.2 reads an open-ended id range to its end before applying LIMIT.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from agent_memory.db.connection import Database, run_with_retry
from agent_memory.db.memory_store import FACT_TABLES
from agent_memory.db.records import Tx
from agent_memory.db.reinforcement import reinforce_statement, reinforced_ids
from agent_memory.domain.vocabulary import DAILY_DECAY, IMPORTANCE_MAX, IMPORTANCE_MIN

DEFAULT_BATCH = 5000


# (table, HNSW index) pairs of migration context/0005.
VECTOR_INDEXES = (
    ('attribute', 'attribute_embedding'),
    ('entity', 'entity_embedding'),
    ('memory_chunk', 'memory_chunk_embedding'),
    ('retrieval_trace', 'retrieval_trace_embedding'),
)


class LifecycleStore:
    def __init__(self, db: Database, database: str, batch: int = DEFAULT_BATCH) -> None:
        self.db = db
        self.database = database
        self.batch = batch

    def _drain(self, statement: str, **params: object) -> int:
        """Repeat one batched statement until it affects nothing; return the rows it touched."""
        total = 0
        while True:
            affected = run_with_retry(lambda: self.db.query(self.database, statement, {**params, 'batch': self.batch})[0])
            total += int(affected or 0)
            if not affected or affected < self.batch:
                return total

    def decay(self, day: str) -> int:
        """One day's decay step for every non-identity fact not yet decayed under ``day``."""
        total = 0
        for table in FACT_TABLES:
            for category, factor in DAILY_DECAY.items():
                total += self._drain(
                    'RETURN array::len((UPDATE (SELECT VALUE id FROM type::table($table) WHERE memory_category = $cat '
                    'AND decay_day != $day LIMIT $batch) '
                    'SET importance = math::max([$lo, math::min([$hi, importance * $factor])]), decay_day = $day '
                    'RETURN VALUE 1));',
                    table=table,
                    cat=category,
                    day=day,
                    factor=factor,
                    lo=IMPORTANCE_MIN,
                    hi=IMPORTANCE_MAX,
                )
        return total

    def expire(self, now: dt.datetime, cutoff: dt.datetime) -> int:
        """Context-category attributes and actions with no own ``valid_until``, known before ``cutoff``, end now."""
        total = 0
        for table in ('attribute', 'action'):
            total += self._drain(
                'RETURN array::len((UPDATE (SELECT VALUE id FROM type::table($table) WHERE memory_category = "context" '
                'AND created_at < $cutoff AND valid_until IS NONE LIMIT $batch) SET valid_until = $now RETURN VALUE 1));',
                table=table,
                cutoff=cutoff,
                now=now,
            )
        return total

    def purge_traces(self, cutoffs: dict[str, dt.datetime]) -> int:
        total = 0
        for table, cutoff in cutoffs.items():
            total += self._drain(
                'RETURN array::len((DELETE (SELECT VALUE id FROM type::table($table) WHERE created_at < $cutoff LIMIT $batch) '
                'RETURN BEFORE));',
                table=table,
                cutoff=cutoff,
            )
        return total

    def reinforce(self, refs: Iterable[tuple[str, Any]]) -> int:
        """Multiply importance by 1.1 (cap 2.0) for every (table, id) in one statement; retried on conflict."""
        ids = reinforced_ids(refs)
        if not ids:
            return 0
        tx = Tx()
        sql = f'RETURN array::len(({reinforce_statement(tx, ids)} RETURN VALUE 1));'
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
