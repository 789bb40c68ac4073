"""Reading large JSON and JSONL files in bounded memory, with positions for every error.

A file is decoded as UTF-8 chunk by chunk (a bad byte is reported by its offset); a JSON array is read one element at
a time (``raw_decode`` on a buffer that holds one element at most, plus what was read ahead of it); JSONL one line at a
time. Each element and line has a size cap, and nesting deeper than the decoder's recursion limit is an error, not a
crash.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Generator, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

CHUNK = 1 << 16
_DECODER = json.JSONDecoder()
_WHITESPACE = ' \t\r\n'


class InputError(ValueError):
    """A file the CLI cannot read as asked; the message names the file and the position."""


@dataclass(frozen=True)
class Item:
    """One top-level value (an array element, a JSONL line or the whole document) and where it starts."""

    value: Any
    line: int


class TextStream:
    """A UTF-8 file as text, read in chunks; tracks the line number of the first character still buffered."""

    def __init__(self, path: Path, handle: BinaryIO) -> None:
        self.path = path
        self._handle = handle
        self._decoder = codecs.getincrementaldecoder('utf-8-sig')('strict')
        self._bytes_read = 0
        self.buffer = ''
        self.line, self.column = 1, 1  # of buffer[0]
        self.eof = False

    def fill(self, at_least: int = CHUNK) -> bool:
        """Append at least ``at_least`` more characters (fewer at the end of the file); False when nothing was left."""
        grown = 0
        while grown < at_least and not self.eof:
            data = self._handle.read(max(at_least - grown, CHUNK))
            pending = len(self._decoder.getstate()[0])
            try:
                text = self._decoder.decode(data, final=not data)
            except UnicodeDecodeError as exc:
                raise InputError(f'{self.path}: not UTF-8 text (byte {self._bytes_read - pending + exc.start})') from None
            self._bytes_read += len(data)
            self.eof = not data
            self.buffer += text
            grown += len(text)
        return grown > 0

    def consume(self, end: int) -> None:
        """Drop ``buffer[:end]`` (keeping the line and column count)."""
        newlines = self.buffer.count('\n', 0, end)
        self.line += newlines
        self.column = end - self.buffer.rfind('\n', 0, end) if newlines else self.column + end
        self.buffer = self.buffer[end:]

    def position(self, index: int) -> str:
        """``line L, column C`` of ``buffer[index]``."""
        newlines = self.buffer.count('\n', 0, index)
        column = index - self.buffer.rfind('\n', 0, index) if newlines else self.column + index
        return f'line {self.line + newlines}, column {column}'

    def skip_whitespace(self) -> bool:
        """Drop leading whitespace; False at the end of the file."""
        while True:
            stripped = self.buffer.lstrip(_WHITESPACE)
            self.consume(len(self.buffer) - len(stripped))
            if self.buffer:
                return True
            if not self.fill():
                return False


def first_character(path: Path) -> str:
    """The first character that is not whitespace ('' for an empty file)."""
    with path.open('rb') as handle:
        stream = TextStream(path, handle)
        return stream.buffer[0] if stream.skip_whitespace() else ''


def array_items(path: Path, max_chars: int) -> Iterator[Item]:
    """The elements of a top-level JSON array, one at a time; each must be an object of at most ``max_chars``."""
    with path.open('rb') as handle:
        stream = TextStream(path, handle)
        if not stream.skip_whitespace() or stream.buffer[0] != '[':
            raise InputError(f'{path}: expected a JSON array')
        stream.consume(1)
        first = True
        while True:
            if not stream.skip_whitespace():
                raise InputError(f'{path}: the array is not closed (the file ends at line {stream.line}; truncated?)')
            if stream.buffer[0] == ']':
                stream.consume(1)
                break
            if not first:
                if stream.buffer[0] != ',':
                    raise InputError(f"{path}: expected ',' or ']' at {stream.position(0)}")
                stream.consume(1)
                if not stream.skip_whitespace():
                    raise InputError(f'{path}: the array is not closed (the file ends at line {stream.line}; truncated?)')
            first = False
            line = stream.line
            yield Item(_object_at_start(stream, max_chars), line)
        if stream.skip_whitespace():
            raise InputError(f'{path}: unexpected content after the array at {stream.position(0)}')


def _object_at_start(stream: TextStream, max_chars: int) -> Any:
    """Decode the object at the start of the buffer, reading more while it is incomplete; consume it."""
    if stream.buffer[0] != '{':
        raise InputError(f'{stream.path}: expected an object at {stream.position(0)}')
    while True:
        try:
            value, end = _DECODER.raw_decode(stream.buffer)
        except json.JSONDecodeError as exc:
            # A value cut short fails at its end (or, for a string, where the string starts); read on before judging.
            end = len(stream.buffer.rstrip(_WHITESPACE)) if stream.eof else len(stream.buffer) - 32
            incomplete = exc.pos >= end or exc.msg.startswith('Unterminated string')
            if stream.eof and incomplete:
                raise InputError(f'{stream.path}: the file ends inside the value starting at line {stream.line} (truncated?)') from None
            if not incomplete:
                raise InputError(f'{stream.path}: invalid JSON at {stream.position(exc.pos)}: {exc.msg}') from None
            if len(stream.buffer) > max_chars:
                raise _too_large(stream, max_chars) from None
            stream.fill(len(stream.buffer))  # doubling: an element is decoded O(log n) times, not once per chunk
            continue
        except RecursionError:
            raise InputError(f'{stream.path}: the value starting at line {stream.line} is nested too deeply') from None
        if end > max_chars:
            raise _too_large(stream, max_chars)
        stream.consume(end)
        return value


def _too_large(stream: TextStream, max_chars: int) -> InputError:
    return InputError(f'{stream.path}: the value starting at line {stream.line} is larger than {max_chars:,} characters')


def line_items(path: Path, max_chars: int) -> Generator[Item, None, None]:
    """The values of a JSONL file, one per non-blank line of at most ``max_chars``."""
    with path.open('rb') as handle:
        stream = TextStream(path, handle)
        while True:
            newline = stream.buffer.find('\n')
            while newline < 0 and not stream.eof:
                if len(stream.buffer) > max_chars:
                    raise InputError(f'{path}:{stream.line}: line longer than {max_chars:,} characters')
                stream.fill()
                newline = stream.buffer.find('\n')
            end = newline if newline >= 0 else len(stream.buffer)
            if end > max_chars:
                raise InputError(f'{path}:{stream.line}: line longer than {max_chars:,} characters')
            text, number = stream.buffer[:end], stream.line
            stream.consume(end + 1 if newline >= 0 else end)
            if text.strip():
                yield Item(parse_line(text, f'{path}:{number}'), number)
            if newline < 0:
                return


def parse_line(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f'{where}: not JSON ({exc.msg} at column {exc.colno})') from None
    except RecursionError:
        raise InputError(f'{where}: nested too deeply') from None


def first_line_is_json(path: Path, max_chars: int) -> bool:
    """Whether the first non-blank line parses on its own (JSONL) rather than starting a multi-line document; a line
    longer than ``max_chars`` is an error either way."""
    with closing(line_items(path, max_chars)) as items:
        try:
            return next(items, None) is not None
        except InputError as exc:
            if 'line longer than' in str(exc):
                raise
            return False


def document(path: Path, max_chars: int) -> Item:
    """A whole JSON document (an object spread over lines), read at most ``max_chars`` characters."""
    with path.open('rb') as handle:
        stream = TextStream(path, handle)
        while stream.fill():
            if len(stream.buffer) > max_chars:
                raise InputError(f'{path}: larger than {max_chars:,} characters (split it, or export it as a JSON array or JSONL)')
        try:
            return Item(json.loads(stream.buffer), 1)
        except json.JSONDecodeError as exc:
            raise InputError(f'{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}') from None
        except RecursionError:
            raise InputError(f'{path}: nested too deeply') from None
