"""Export a context, and restore an export into an empty context (management API; docs/backup-format.md).

Export is paged: each ``GET …/export`` answers at most ``PAGE_BYTES`` of NDJSON (the first page starts with the
header and the context record) and a cursor for the next. Import is staged: ``POST …/import`` checks the header and
that the context is empty; each ``POST …/import/{id}`` checks a batch of lines and stages it, where nothing reads it;
``POST …/import/{id}/commit`` first checks the whole file arrived (the header's counts) and that every required link
names a row of the file: everything is validated before anything is written, so a bad or truncated file is refused with
its line and writes nothing to the context. Then it moves the rows in, a small batch per transaction, for at most
``COMMIT_SECONDS`` per request; the caller commits again until it is done, and an interrupted commit resumes. The
engine's cost of a transaction grows faster than its rows (3,600 facts with vectors, on the embedded engine: 100 per
transaction 13 s and +0.2 GB; 500 per transaction 34 s and +1.8 GB; all in one ran out of memory).

Embeddings travel in the file (``f32:``/``f64:`` base64), so a restored context ranks exactly as the original did: an
entity's vector is of its name when first seen and an attribute's of the words of the turn that stated it, which a
recomputation could not always rebuild; the vectors are refused when the deployment's model differs.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from agent_memory.backup_format import CONTEXT, KIND, KINDS, ContextSettings, FormatError, Header, Record, check_record, parse_header
from agent_memory.clock import iso, new_id
from agent_memory.domain.context_config import effective_config
from agent_memory.domain.contexts import existing_context
from agent_memory.domain.params import decode_cursor, encode_cursor
from agent_memory.errors import BadRequest, Conflict, NotFound

if TYPE_CHECKING:
    from agent_memory.domain.ports import BackupRows, ContextPorts, Control
    from agent_memory.rows.backup import Key

PAGE_ROWS = 500
PAGE_BYTES = 2 * 1024 * 1024  # of NDJSON per export page: well under Lambda's 6 MB response limit
COMMIT_ROWS = 100  # rows per commit transaction (see above)
COMMIT_SECONDS = 10.0  # per commit request, well under the HTTP API's 30 s
CHECK_ROWS = 1000  # staged rows per page of the link check
VECTOR_KINDS = ('memory_chunk', 'entity', 'attribute', 'retrieval_trace')
NO_IMPORT = 'no such import in progress (it was committed or discarded, or a newer import replaced it)'

StoresOf = Callable[[str], 'ContextPorts']


def export_page(control: Control, stores_of: StoresOf, embedding: tuple[str, int], context_id: str, cursor: str | None,
                traces: bool, now: dt.datetime) -> tuple[str, str | None]:  # fmt: skip
    """One page of the export (NDJSON text) and the cursor of the next page (None on the last)."""
    row = existing_context(control, context_id)
    backup = stores_of(context_id).backup
    kind_index, after, traces = _position(cursor, traces)
    kinds = [k.name for k in KINDS if traces or not k.trace]
    lines: list[str] = []
    if cursor is None:
        counts = {CONTEXT: 1, **backup.counts(kinds)}
        header = Header(context_id, iso(now) or '', counts, embedding[0], embedding[1], traces)
        epoch, day = backup.clock()
        settings = {'record': CONTEXT, 'config': row.config, 'description': row.description, 'decayEpoch': epoch, 'scheduledDay': day}
        lines = [_json(header.to_json()), _json(settings)]
    size = sum(len(line) + 1 for line in lines)
    while kind_index < len(kinds):
        rows = backup.export_rows(kinds[kind_index], after, PAGE_ROWS)
        for exported in rows:
            if lines and size + len(exported.line) + 1 > PAGE_BYTES:
                return _body(lines), encode_cursor([kind_index, _json_key(after), traces])
            lines.append(exported.line)
            size += len(exported.line) + 1
            after = exported.key
        if len(rows) < PAGE_ROWS:
            kind_index, after = kind_index + 1, None
    return _body(lines), None


def _position(cursor: str | None, traces: bool) -> tuple[int, Key | None, bool]:
    """Where a cursor resumes: the kind's index, the last key exported, and whether traces are exported."""
    if cursor is None:
        return 0, None, traces
    value = decode_cursor(cursor)
    valid = isinstance(value, list) and len(value) == 3 and isinstance(value[0], int) and 0 <= value[0] <= len(KINDS)
    after = value[1] if valid else None
    if not valid or not isinstance(value[2], bool) or not (after is None or isinstance(after, str) or _is_pair(after)):
        raise BadRequest('invalid cursor')
    return value[0], tuple(after) if isinstance(after, list) else after, value[2]


def _is_pair(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)


def _json_key(key: Key | None) -> Any:
    return list(key) if isinstance(key, tuple) else key


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(',', ':'))


def _body(lines: list[str]) -> str:
    return '\n'.join(lines) + '\n' if lines else ''


# ---- import -------------------------------------------------------------------------------------------------------------


def start_import(control: Control, stores_of: StoresOf, embedding: tuple[str, int], context_id: str, body: Any,
                 now: dt.datetime) -> dict[str, Any]:  # fmt: skip
    """Check the header (line 1) and that the context is empty; open an import for the records that follow."""
    existing_context(control, context_id)
    header = _header(body)
    carries_vectors = any(header.counts.get(kind, 0) for kind in VECTOR_KINDS)
    if carries_vectors and (header.embedding_model, header.embedding_dimension) != embedding:
        raise BadRequest(
            f'line 1: the export holds {header.embedding_dimension}-d vectors of {header.embedding_model!r}; this deployment embeds '
            f'with {embedding[1]}-d {embedding[0]!r}, whose vectors are not comparable'
        )
    backup = stores_of(context_id).backup
    if not backup.is_empty():
        raise Conflict(f'context {context_id!r} is not empty: an export is restored into a new context (create one first)')
    job = new_id()
    backup.start_import(job, _json(header.to_json()), now)
    return {'importId': job, 'context': context_id, 'records': header.records}


def stage(control: Control, stores_of: StoresOf, context_id: str, job: str, start_line: int, values: list[Any]) -> dict[str, Any]:
    """Check a batch of lines (``start_line`` is the first one's number in the file) and stage them; nothing is staged
    unless every line of the batch is right."""
    existing_context(control, context_id)
    backup = stores_of(context_id).backup
    header = _job_header(backup, job)
    if backup.committing(job):
        raise Conflict('this import is being committed: it takes no more records')
    records: list[Record] = []
    settings: ContextSettings | None = None
    settings_line: int | None = None
    for offset, value in enumerate(values):
        try:
            record = check_record(value, start_line + offset, header)
        except FormatError as exc:
            raise BadRequest(str(exc)) from None
        if record.settings is None:
            records.append(record)
            continue
        saved = backup.settings(job)
        first = json.loads(saved)['line'] if saved else settings_line
        if first is not None and first != record.line:
            raise BadRequest(f'line {record.line}: a second context record (the first is line {first}; an export holds one)')
        if saved is None:  # a batch sent again finds its context record saved
            settings, settings_line = _checked_settings(record.settings, record.line), record.line
    staged = backup.stage(job, records)
    if staged.duplicate is not None:
        line, first = staged.duplicate
        raise BadRequest(f'line {line}: the same kind and id as line {first}')
    if settings is not None:
        backup.save_settings(job, _json({'line': settings_line, **asdict(settings)}))
    return {'received': len(values), 'staged': staged.new + (settings is not None)}


def _checked_settings(settings: ContextSettings, line: int) -> ContextSettings:
    try:
        effective_config(settings.config)
    except (ValueError, BadRequest) as exc:  # pydantic's ValidationError is a ValueError
        raise BadRequest(f'line {line}: context.config is not a valid configuration: {exc}') from None
    return settings


def commit(control: Control, stores_of: StoresOf, context_id: str, job: str, now: dt.datetime) -> dict[str, Any]:
    """Write the import into the context, a batch per transaction for at most ``COMMIT_SECONDS``; ``done`` says whether
    it is complete (else the caller commits again: the next call resumes where this one stopped). The first call checks
    the import is whole and consistent: nothing is written unless it is."""
    existing_context(control, context_id)
    stores = stores_of(context_id)
    backup = stores.backup
    header = _job_header(backup, job)
    kinds = [kind for kind in header.kinds() if kind != CONTEXT]
    settings = _saved_settings(backup, job)
    started = time.monotonic()
    if not backup.committing(job):
        _check_counts(backup, job, header, kinds, settings is not None)
        while not (check := backup.check_links(job, CHECK_ROWS)).done:
            if check.dangling is not None:
                found = check.dangling
                field = next(f.wire for f in KIND[found.kind].fields if f.name == found.field)
                raise BadRequest(f'line {found.line}: {found.kind}.{field} names {found.key!r}, which is not in the file; '
                                 'nothing was written')  # fmt: skip
            if time.monotonic() - started >= COMMIT_SECONDS:
                return _committed(context_id, header, False, 0, started)
        backup.begin_commit(job)
    moved = 0
    while batch := backup.move_batch(job, kinds, COMMIT_ROWS):
        moved += batch
        if time.monotonic() - started >= COMMIT_SECONDS:
            return _committed(context_id, header, False, moved, started)
    assert settings is not None
    stores.memory.ensure_reserved_principals(now)  # a file without them still leaves the context its admin and system
    control.restore_context_settings(context_id, settings.config, settings.description, now)
    backup.finish_commit(job, settings.decay_epoch, settings.scheduled_day)
    return _committed(context_id, header, True, moved, started)


def _committed(context_id: str, header: Header, done: bool, moved: int, started: float) -> dict[str, Any]:
    return {'context': context_id, 'sourceContext': header.context, 'done': done, 'written': moved,
            'counts': header.counts if done else None, 'ms': round((time.monotonic() - started) * 1000)}  # fmt: skip


def _saved_settings(backup: BackupRows, job: str) -> ContextSettings | None:
    saved = backup.settings(job)
    return ContextSettings(**{k: v for k, v in json.loads(saved).items() if k != 'line'}) if saved else None


def _check_counts(backup: BackupRows, job: str, header: Header, kinds: list[str], has_settings: bool) -> None:
    """Every record the header announces arrived (else 400: a truncated file)."""
    counts = {CONTEXT: int(has_settings), **backup.staged_counts(job, kinds)}
    short = [(kind, header.counts.get(kind, 0), counts[kind]) for kind in header.kinds() if counts[kind] != header.counts.get(kind, 0)]
    if short:
        kind, announced, arrived = short[0]
        raise BadRequest(f'incomplete import: the header announces {announced} {kind} record(s) and {arrived} arrived '
                         '(a truncated file?); nothing was written')  # fmt: skip


def discard(control: Control, stores_of: StoresOf, context_id: str, job: str) -> None:
    """Drop an import that has not begun its commit (one that has is finished by committing again)."""
    existing_context(control, context_id)
    backup = stores_of(context_id).backup
    _job_header(backup, job)
    if backup.committing(job):
        raise Conflict('the commit of this import has begun: commit again to finish it (or delete the context)')
    backup.discard(job)


def _header(body: Any) -> Header:
    try:
        return parse_header(body)
    except FormatError as exc:
        raise BadRequest(str(exc)) from None


def _job_header(backup: BackupRows, job: str) -> Header:
    text = backup.import_header(job) if job.isalnum() else None
    if text is None:
        raise NotFound(NO_IMPORT)
    return _header(json.loads(text))
