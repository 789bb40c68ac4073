"""``agent-memory export`` and ``agent-memory import``: a context to a file and back (docs/backup-format.md).

Both stream: the export is fetched a page at a time and written as it comes (into a temporary file renamed at the end,
so a failed export never leaves a file that looks whole); the import reads the file twice, line by line: first to check
every line with the format's own checks (a bad or truncated file is refused with its line before anything is sent),
then to send it in batches, which the service checks again and stages. The commit writes nothing unless the whole file
arrived and holds together; it then writes in batches, and a commit cut short resumes (``--resume``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from agent_memory.backup_format import FormatError, Header, check_record, parse_header
from agent_memory.cli.client import ApiError, Client, Unreachable
from agent_memory.cli.common import Incomplete, context_of
from agent_memory.cli.jsonstream import InputError
from agent_memory.cli.progress import Progress

MAX_LINE_BYTES = 900 * 1024  # one record must fit one request (the service takes 1 MiB bodies by default)
BATCH_BYTES = 768 * 1024
BATCH_RECORDS = 2000


def run_export(client: Client, args: argparse.Namespace) -> Any:
    context = context_of(client, args)
    started = time.monotonic()
    path: Path | None = args.output
    partial = path.with_name(f'.{path.name}.partial') if path else None
    exported: Counter[str] = Counter()
    size = 0
    with open(partial, 'w', encoding='utf-8', newline='\n') if partial else contextlib.nullcontext(sys.stdout) as out:
        try:
            header, progress, cursor = None, None, None
            while True:
                query = {'traces': 'true' if args.traces else 'false', **({'cursor': cursor} if cursor else {})}
                answer = client.send('GET', f'/api/v1/contexts/{context}/export', management=True, query=query)
                text = answer.body.decode('utf-8')
                for line in text.splitlines():
                    if header is None:
                        header = parse_header(json.loads(line))
                        progress = Progress(header.records, 'records', 'export')
                    else:
                        exported[json.loads(line)['record']] += 1
                        if progress:
                            progress.advance()
                out.write(text)
                size += len(answer.body)
                cursor = answer.headers.get('x-next-cursor')
                if not cursor:
                    break
        except BaseException:
            if partial:
                partial.unlink(missing_ok=True)
            raise
    if progress:
        progress.finish()
    assert header is not None
    if dict(exported) != {k: n for k, n in header.counts.items() if n}:
        if partial:
            partial.unlink(missing_ok=True)
        changed = sorted(k for k in set(exported) | set(header.counts) if exported[k] != header.counts.get(k, 0))
        raise Incomplete(f'the context changed during the export ({changed[0]}: {header.counts.get(changed[0], 0)} counted, '
                         f'{exported[changed[0]]} exported); export again while nothing writes to it')  # fmt: skip
    if partial and path:
        partial.replace(path)
    summary = {'context': context, 'records': sum(exported.values()), 'counts': {k: exported[k] for k in header.counts}, 'bytes': size,
               'seconds': round(time.monotonic() - started, 2)}  # fmt: skip
    if path is None:
        print(json.dumps(summary), file=sys.stderr)
        return None
    return {**summary, 'output': str(path)}


def run_import(client: Client, args: argparse.Namespace) -> Any:
    started = time.monotonic()
    header = check_file(args.file)
    checked = time.monotonic()
    context = context_of(client, args)
    base = f'/api/v1/contexts/{context}/import'
    job = args.resume or client.call('POST', base, header.to_json(), management=True)['importId']
    if not args.resume:
        try:
            progress = Progress(header.records, 'records', 'send')
            for start_line, batch in _batches(args.file):
                body = f'{{"startLine": {start_line}, "records": [{",".join(batch)}]}}'.encode()
                client.call('POST', f'{base}/{job}', body, management=True)
                progress.advance(len(batch))
            progress.finish()
        except BaseException:
            with contextlib.suppress(ApiError, OSError):
                client.call('DELETE', f'{base}/{job}', management=True)
            raise
    sent = time.monotonic()
    try:
        done = _commit(client, f'{base}/{job}/commit', header.records - 1)
    except (ApiError, Unreachable) as exc:
        if isinstance(exc, ApiError) and exc.status in (400, 404, 409):
            raise
        resume = f'agent-memory import {args.file} --context {context} --resume {job}'
        raise Incomplete(f'{exc}; the restore stopped part way: run `{resume}` to finish it') from None
    seconds = {'check': checked - started, 'send': sent - checked, 'write': time.monotonic() - sent, 'total': time.monotonic() - started}
    return {**done, 'importId': job, 'records': header.records, 'seconds': {k: round(v, 2) for k, v in seconds.items()}}


def _commit(client: Client, path: str, rows: int) -> Any:
    """Commit until the service says it is done (each call writes for a few seconds and resumes the last one)."""
    progress = Progress(rows, 'records', 'write')
    while True:
        done = client.call('POST', path, management=True)
        progress.advance(done['written'])
        if done['done']:
            progress.finish()
            return done


def check_file(path: Path) -> Header:
    """Check every line of an export with the format's checks; the header, or InputError with the line that is wrong."""
    header: Header | None = None
    found: Counter[str] = Counter()
    progress = None
    last = 0
    for number, text in _lines(path):
        last = number
        try:
            value = _parse(text, number)
            if header is None:
                header = parse_header(value)
                progress = Progress(header.records, 'records', 'check')
                continue
            record = check_record(value, number, header)
        except FormatError as exc:
            hint = f'; to import chat conversations: agent-memory import-conversations {path}' if header is None else ''
            raise InputError(f'{path}:{exc.line}: {exc.reason}{hint}') from None
        found[record.kind] += 1
        if found[record.kind] > header.counts.get(record.kind, 0):
            raise InputError(f'{path}:{number}: more {record.kind} records than the header announces ({header.counts.get(record.kind, 0)})')
        if progress:
            progress.advance()
    if header is None:
        raise InputError(f'{path}: empty file')
    if progress:
        progress.finish()
    missing = [(kind, n) for kind, n in header.counts.items() if found[kind] != n]
    if missing:
        kind, n = missing[0]
        raise InputError(f'{path}:{last}: the file ends after {found[kind]} of the {n} {kind} records the header announces (truncated?)')
    return header


def _parse(text: str, number: int) -> Any:
    if not text.strip():
        raise FormatError(number, 'empty line (an export has none)')
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(number, f'not JSON ({exc.msg} at column {exc.colno})') from None
    except RecursionError:
        raise FormatError(number, 'nested too deeply') from None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of ``path`` with their numbers, each at most MAX_LINE_BYTES (a final newline is optional)."""
    if not path.is_file():
        raise InputError(f'{path}: no such file')
    with path.open('rb') as handle:
        yield from _numbered(path, handle)


def _numbered(path: Path, handle: IO[bytes]) -> Iterator[tuple[int, str]]:
    number = 0
    while True:
        raw = handle.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        number += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b'\n'):
            raise InputError(f'{path}:{number}: a record longer than {MAX_LINE_BYTES:,} bytes (more than one request may hold)')
        try:
            yield number, raw.decode('utf-8').removesuffix('\n').removesuffix('\r')
        except UnicodeDecodeError as exc:
            raise InputError(f'{path}:{number}: not UTF-8 text (byte {exc.start + 1} of the line)') from None


def _batches(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The records (lines 2…) in batches within a request's limits: (the first line's number, the lines)."""
    batch: list[str] = []
    first, size = 2, 0
    for number, text in _lines(path):
        if number == 1:
            continue
        cost = len(text.encode()) + 1
        if batch and (len(batch) >= BATCH_RECORDS or size + cost > BATCH_BYTES):
            yield first, batch
            batch, first, size = [], number, 0
        batch.append(text)
        size += cost
    if batch:
        yield first, batch
