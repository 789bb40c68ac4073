"""A context's rows out to the export format and back (docs/backup-format.md).

Export: each kind's rows in key order, a page at a time (``id > $after``: the engine filters keys before decoding rows),
rendered field by field as the format says (record ids as keys, times with their nanoseconds, vectors packed).

Import: every batch of checked records is staged in ``import_row`` (migration 0033; ids ``[import, kind, key]``), where
no read looks; once the whole file is staged and checked, the commit moves the staged rows into their tables kind by
kind, a batch per transaction that also deletes what it moved (so memory stays bounded, and an interrupted commit
resumes). The database computes the derived fields again (string keys, search text, importance) and its events write
the lean mirrors, exactly as for rows written by the service.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Any

from agent_memory.backup_format import KIND, KINDS, Field, Instant, Kind, Record, encode_vector, format_instant
from agent_memory.db.connection import Database, QueryFailed
from agent_memory.db.records import rid
from agent_memory.db.sdk import PreciseDatetime, RecordID, vector
from agent_memory.errors import Conflict
from agent_memory.rows.backup import Dangling, ExportRow, Key, LinkCheck, Staged

RESERVED_PRINCIPALS = ('admin', 'system')
NOT_EMPTY = 'am-import-context-not-empty'
# The tables that hold memory: a context with a row in any of them (or a principal beyond the reserved two) is not empty.
MEMORY_TABLES = ('session', 'turn', 'memory_chunk', 'entity', 'attribute', 'relates_to', 'action', 'instruction', 'uncertainty')
_EMPTY = (
    'array::len(array::flatten(['
    + ', '.join(f'(SELECT VALUE id FROM {table} LIMIT 1)' for table in MEMORY_TABLES)
    + ', (SELECT VALUE id FROM principal WHERE id NOTINSIDE [principal:admin, principal:system] LIMIT 1)])) = 0'
)


def _target(kind: str, name: str) -> str:
    return next(f.target for f in KIND[kind].fields if f.name == name)


# A staged row whose required link names no staged row (the links that must be in the file: backup_format.Kind).
_LINK_CHECK = ' OR '.join(
    f"(record::id(id)[1] = '{kind.name}' AND !record::exists(type::record('import_row', [$job, '{_target(kind.name, name)}', "
    f'record::id(row.`{name}`)])))'
    for kind in KINDS
    for name in kind.required_links
)


class BackupStore:
    def __init__(self, db: Database, database: str) -> None:
        self.db = db
        self.database = database

    def _q(self, sql: str, **params: Any) -> list[Any]:
        return self.db.query(self.database, sql, params)

    # ---- export ---------------------------------------------------------------------------------------------------------
    def counts(self, kinds: Sequence[str]) -> dict[str, int]:
        results = self._q(''.join(f'SELECT count() FROM {kind} GROUP ALL;' for kind in kinds))
        return {kind: int(rows[0]['count']) if rows else 0 for kind, rows in zip(kinds, results, strict=True)}

    def clock(self) -> tuple[int, str | None]:
        """The decay clock: how many decay steps this context has taken, and the day of the last scheduled one."""
        row = self._q('SELECT decay_epoch, scheduled_day FROM ONLY lifecycle_clock:decay;')[0] or {}
        return int(row.get('decay_epoch') or 0), row.get('scheduled_day')

    def export_rows(self, kind: str, after: Key | None, limit: int) -> list[ExportRow]:
        """Up to ``limit`` rows of ``kind`` after the key ``after``, in key order, each as a line of the format."""
        spec = KIND[kind]
        projection = ', '.join(['id', *(f'`{f.name}`' for f in spec.fields)])
        where = ' WHERE id > $after' if after is not None else ''
        rows = self._q(f'SELECT {projection} FROM {kind}{where} LIMIT $limit;', after=_record(kind, after), limit=limit)[0]
        return [_render(spec, row) for row in rows or []]

    # ---- import ---------------------------------------------------------------------------------------------------------
    def is_empty(self) -> bool:
        return bool(self._q(f'RETURN {_EMPTY};')[0])

    def start_import(self, job: str, header: str, now: dt.datetime) -> None:
        """A new import (its header as JSON text); whatever an earlier, unfinished import staged is dropped."""
        self._drop_staged(rid('import_row', []), rid('import_row', [{}]))
        self._q(
            'DELETE import_job; CREATE $job SET header = $header, created_at = $now;', job=rid('import_job', job), header=header, now=now
        )

    def import_header(self, job: str) -> str | None:
        """The header (JSON text) of an import in progress, None when there is none of that id."""
        row = self._q('SELECT header FROM ONLY $job;', job=rid('import_job', job))[0]
        return str(row['header']) if row else None

    def save_settings(self, job: str, settings: str) -> None:
        """The context record (JSON text), kept until the commit applies it."""
        self._q('UPDATE $job SET settings = $settings RETURN NONE;', job=rid('import_job', job), settings=settings)

    def settings(self, job: str) -> str | None:
        row = self._q('SELECT settings FROM ONLY $job;', job=rid('import_job', job))[0]
        return str(row['settings']) if row and row.get('settings') else None

    def stage(self, job: str, records: Sequence[Record]) -> Staged:
        """Stage checked records; a record already staged from the same line (a batch sent again) is skipped."""
        seen: dict[Any, Record] = {}
        for record in records:
            staged_id = _staged_id(job, record)
            if staged_id in seen:
                return Staged(0, (record.line, seen[staged_id].line))
            seen[staged_id] = record
        existing = {row['id']: row['line'] for row in self._q('SELECT id, line FROM $ids;', ids=list(seen))[0] or []}
        for staged_id, record in seen.items():
            if existing.get(staged_id, record.line) != record.line:
                return Staged(0, (record.line, existing[staged_id]))
        fresh = [{'id': staged_id, 'line': r.line, 'row': _row(r)} for staged_id, r in seen.items() if staged_id not in existing]
        if fresh:
            self._q('INSERT INTO import_row $rows RETURN NONE;', rows=fresh)
        return Staged(len(fresh))

    def staged_counts(self, job: str, kinds: Sequence[str]) -> dict[str, int]:
        sql = ''.join(f"SELECT count() FROM import_row:[$job, '{kind}', NONE]..[$job, '{kind}', {{}}] GROUP ALL;" for kind in kinds)
        results = self._q(sql, job=job)
        return {kind: int(rows[0]['count']) if rows else 0 for kind, rows in zip(kinds, results, strict=True)}

    def check_links(self, job: str, limit: int) -> LinkCheck:
        """Check the next ``limit`` staged rows (in key order, after the last call's): the first whose required link
        names no staged row, or whether every row has been checked. Pages keep the memory and time of a call bounded."""
        rows = self._q(
            "LET $after = $job_row.checked_after ?? $start;\n"
            'LET $ids = (SELECT VALUE id FROM import_row WHERE id > $after AND id < $end LIMIT $limit);\n'
            f'LET $bad = (SELECT line, record::id(id)[1] AS kind, row FROM $ids WHERE {_LINK_CHECK} ORDER BY line LIMIT 1);\n'
            'IF array::len($ids) > 0 { UPDATE $job_row SET checked_after = array::last($ids) RETURN NONE; };\n'
            'RETURN [array::len($ids), $bad];',
            job=job, job_row=rid('import_job', job), start=rid('import_row', [job]), end=rid('import_row', [job, {}]), limit=limit,
        )  # fmt: skip
        checked, bad = rows[-1]
        if not bad:
            return LinkCheck(None, done=not checked)
        line, kind, row = int(bad[0]['line']), str(bad[0]['kind']), bad[0]['row']
        links = {name: rid('import_row', [job, _target(kind, name), _json_key(_wire_key(row[name]))]) for name in KIND[kind].required_links}
        staged = set(self._q('SELECT VALUE id FROM $ids;', ids=list(links.values()))[0] or [])
        name = next(n for n, staged_id in links.items() if staged_id not in staged)
        return LinkCheck(Dangling(line, kind, name, _wire_key(row[name])), done=False)

    def committing(self, job: str) -> bool:
        """Whether the commit of this import has begun (its checks passed and rows may already be in the context)."""
        return bool(self._q('RETURN $job.committing;', job=rid('import_job', job))[0])

    def begin_commit(self, job: str) -> None:
        """Start moving rows in: the context must still be empty (Conflict otherwise); its reserved principals make way
        for the file's."""
        sql = (
            'BEGIN TRANSACTION;\n'
            f"IF !({_EMPTY}) {{ THROW '{NOT_EMPTY}' }};\n"
            'DELETE principal RETURN NONE;\n'
            'UPDATE $job SET committing = true RETURN NONE;\n'
            'COMMIT TRANSACTION;'
        )
        try:
            self._q(sql, job=rid('import_job', job))
        except QueryFailed as exc:
            if NOT_EMPTY in str(exc):
                raise Conflict('the context is no longer empty: something was written to it during the import') from None
            raise

    def move_batch(self, job: str, kinds: Sequence[str], limit: int) -> int:
        """Move up to ``limit`` staged rows of the first kind that has any into its table, in one transaction that also
        deletes them from the staging: how many were moved (0: nothing is left)."""
        for kind in kinds:
            insert = 'INSERT RELATION INTO' if kind == 'relates_to' else 'INSERT INTO'
            # A key range in FROM is read whole before LIMIT applies (3.2.4: a scan of every staged row per batch); a
            # table scan with the range as its predicate stops at LIMIT and compares keys before decoding rows.
            moved = self._q(
                'BEGIN TRANSACTION;\n'
                f"LET $ids = (SELECT VALUE id FROM import_row WHERE id > import_row:[$job, '{kind}', NONE] "
                f"AND id < import_row:[$job, '{kind}', {{}}] LIMIT $limit);\n"
                f'{insert} {kind} (SELECT VALUE row FROM $ids) RETURN NONE;\n'
                'DELETE $ids RETURN NONE;\n'
                'RETURN array::len($ids);\n'
                'COMMIT TRANSACTION;',
                job=job,
                limit=limit,
            )
            count = int(next((r for r in reversed(moved) if isinstance(r, int)), 0))
            if count:
                return count
        return 0

    def finish_commit(self, job: str, decay_epoch: int, scheduled_day: str | None) -> None:
        """The decay clock as exported; the import is done."""
        self._q('UPSERT lifecycle_clock:decay SET decay_epoch = $epoch, scheduled_day = $day RETURN NONE; DELETE $job RETURN NONE;',
                epoch=decay_epoch, day=scheduled_day, job=rid('import_job', job))  # fmt: skip

    def discard(self, job: str) -> None:
        """Drop an import's staged rows and the import itself (when it is abandoned)."""
        self._drop_staged(rid('import_row', [job]), rid('import_row', [job, {}]))
        self._q('DELETE $id RETURN NONE;', id=rid('import_job', job))

    def _drop_staged(self, after: RecordID, before: RecordID) -> None:
        """Delete the staged rows between two keys, 1,000 per statement (a FROM key range would be read whole first)."""
        sql = (
            'LET $ids = (SELECT VALUE id FROM import_row WHERE id > $after AND id < $before LIMIT 1000);'
            'DELETE $ids RETURN NONE; RETURN array::len($ids);'
        )
        while self._q(sql, after=after, before=before)[-1]:
            pass


# ---- rows to lines ------------------------------------------------------------------------------------------------------


def _render(spec: Kind, row: dict[str, Any]) -> ExportRow:
    key = _wire_key(row['id'])
    record: dict[str, Any] = {'record': spec.name, 'id': list(key) if isinstance(key, tuple) else key}
    for field in spec.fields:
        value = row.get(field.name)
        if value is not None:
            record[field.wire] = _wire(field, value)
    return ExportRow(key, json.dumps(record, ensure_ascii=False, separators=(',', ':'), default=str))


def _wire(field: Field, value: Any) -> Any:
    if field.type == 'time':
        return format_instant(value, getattr(value, 'nanosecond', 0))
    if field.type == 'link':
        return _json_key(_wire_key(value))
    if field.type == 'links':
        return [_json_key(_wire_key(v)) for v in value]
    if field.type == 'vector':
        return encode_vector([float(v) for v in value])
    if field.type == 'float':
        return float(value)
    return value


def _wire_key(value: Any) -> Key:
    key = value.id if isinstance(value, RecordID) else value
    if isinstance(key, list):
        return str(key[0]), str(key[1])
    return str(key)


def _json_key(key: Key) -> str | list[str]:
    return list(key) if isinstance(key, tuple) else key


def _record(table: str, key: Key | None) -> RecordID | None:
    return None if key is None else rid(table, list(key) if isinstance(key, tuple) else key)


# ---- records to staged rows ------------------------------------------------------------------------------------------------


def _staged_id(job: str, record: Record) -> RecordID:
    assert record.key is not None
    return rid('import_row', [job, record.kind, _json_key(record.key)])


def _row(record: Record) -> dict[str, Any]:
    spec = KIND[record.kind]
    row: dict[str, Any] = {'id': _record(record.kind, record.key)}
    for field in spec.fields:
        if field.name in record.values:
            row[field.name] = _value(field, record.values[field.name])
    return row


def _value(field: Field, value: Any) -> Any:
    if field.type == 'time':
        return _datetime(value)
    if field.type == 'link':
        return _record(field.target, value)
    if field.type == 'links':
        return [_record(field.target, v) for v in value]
    if field.type == 'vector':
        return vector(value)
    return value


def _datetime(instant: Instant) -> dt.datetime:
    m = instant.moment
    return PreciseDatetime(m.year, m.month, m.day, m.hour, m.minute, m.second, m.microsecond, tzinfo=dt.UTC, nanosecond=instant.nanosecond)
