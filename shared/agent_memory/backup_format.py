"""The export file format (docs/backup-format.md): what each record kind holds, and the checks every line passes.

A leaf module (standard library only): the repository renders rows into this format and back, the domain checks what
an import sends with it, and the CLI checks a file with the same code before it sends anything.

An export is NDJSON: a header line ``{format, version, context, exportedAt, counts, embedding, traces}``, then one
record per line, ``{"record": <kind>, "id": <key>, <field>: <value>, ...}``, with field names in camelCase. The kinds
are the context's tables (plus one ``context`` record: its configuration and decay clock); each field has one type:

* ``string``, ``int``, ``float`` (finite; some bounded), ``bool``; ``object`` / ``objects`` (JSON as stored);
* ``time``: RFC 3339 in UTC with up to nine fractional digits (the database keeps nanoseconds);
* ``scopes``: a scope set (an OR of AND-clauses of scope paths); ``strings``: a list of strings;
* ``link`` / ``links``: the key of a row of the named table (an entity's key is ``[type, name]``, any other a string);
* ``vector``: ``f32:`` or ``f64:`` then the little-endian floats in base64 (``f32`` when that is exact).

Derived fields (the computed string keys, lean mirrors, importance) are not in the file: the database computes them
again when the rows are written. ``importance = importanceBase × factor^(clock − decayEpoch)`` with the context's
clock in the ``context`` record, so a restored fact has the importance it had.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import math
import re
import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

from agent_memory.vocabulary import CATEGORIES, ENTITY_TYPES

FORMAT = 'agent-memory-export'
VERSION = 1
CONTEXT = 'context'  # the one record of the context's own settings: its configuration and decay clock
MAX_KEY_CHARS = 1024
TYPES = ('string', 'int', 'float', 'bool', 'object', 'objects', 'time', 'scopes', 'strings', 'link', 'links', 'vector')


class FormatError(ValueError):
    """A line of an export that is not what the format says; ``line`` is its number in the file (1: the header)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f'line {line}: {message}')
        self.line = line
        self.reason = message


class Instant(NamedTuple):
    """A stored time: the datetime (microseconds) and the nanoseconds below them."""

    moment: dt.datetime
    nanosecond: int


@dataclass(frozen=True)
class Field:
    name: str  # as stored
    type: str
    optional: bool = False
    target: str = ''  # the table a link points at
    choices: tuple[str, ...] = ()
    bounds: tuple[float, float] | None = None

    @property
    def wire(self) -> str:
        head, *rest = self.name.split('_')
        return head + ''.join(part.capitalize() for part in rest)


@dataclass(frozen=True)
class Kind:
    name: str  # the table
    fields: tuple[Field, ...]
    trace: bool = False  # exported with --traces only
    required_links: tuple[str, ...] = ()  # links that must name a row of the same file (every other link may dangle)

    @property
    def entity_key(self) -> bool:
        return self.name == 'entity'

    def field(self, wire: str) -> Field | None:
        return _FIELDS[self.name].get(wire)


def _text(name: str, optional: bool = False, choices: tuple[str, ...] = ()) -> Field:
    return Field(name, 'string', optional, choices=choices)


def _time(name: str, optional: bool = False) -> Field:
    return Field(name, 'time', optional)


def _link(name: str, target: str, optional: bool = False) -> Field:
    return Field(name, 'link', optional, target=target)


def _vector(name: str) -> Field:
    return Field(name, 'vector', optional=True)


SCOPES = Field('scope_sets', 'scopes')
CATEGORY = _text('memory_category', choices=CATEGORIES)
IMPORTANCE = (Field('importance_base', 'float', bounds=(0.0, 2.0)), Field('decay_epoch', 'int', bounds=(0, 2**62)))
CREATED = _time('created_at')
# A fact's provenance and validity (attributes, relations, actions).
FACT = (CATEGORY, *IMPORTANCE, Field('source', 'object'), _link('source_turn', 'turn', True), _time('valid_from'),
        _time('valid_until', True), CREATED, SCOPES)  # fmt: skip

KINDS: tuple[Kind, ...] = (
    Kind('principal', (_text('display_name'), _text('kind', choices=('human', 'agent', 'service')), Field('grants', 'object'),
                       Field('default_scopes', 'scopes'), _text('external_id', True), CREATED, _time('updated_at', True))),
    Kind('session', (_text('principal'), _text('client_id', True), Field('metadata', 'object'), SCOPES, CREATED, _time('closed_at', True))),
    Kind('turn', (_link('session', 'session'), Field('seq', 'int', bounds=(0, 2**62)),
                  _text('role', choices=('user', 'assistant', 'system', 'tool')), _text('content'), _text('speaker', True),
                  _text('origin', True, ('chat', 'chat_reply')), _text('principal'), _text('acting_principal', True),
                  _text('memory_category', True), SCOPES, Field('read_region', 'strings', True), CREATED, _time('observed_at'),
                  _text('extraction_status', True), _text('extraction_mode', True), _text('extraction_error', True),
                  _text('llm_error', True), _text('extraction_result', True), Field('extraction_attempts', 'int', bounds=(0, 2**31)),
                  _time('enqueued_at', True), _time('extracted_at', True)),
         required_links=('session',)),
    Kind('memory_chunk', (_link('session', 'session'), _link('turn', 'turn'), Field('position', 'int', bounds=(0, 2**31)),
                          _text('text'), _text('role', True), Field('labels', 'strings'), SCOPES, CREATED, _vector('embedding')),
         required_links=('session', 'turn')),
    Kind('entity', (_text('name'), _text('type', choices=ENTITY_TYPES), CATEGORY, *IMPORTANCE, _text('self_principal', True), SCOPES,
                    CREATED, _time('updated_at'), _vector('embedding'))),
    Kind('attribute', (_link('entity', 'entity'), _text('key'), _text('value'), Field('confidence', 'float', bounds=(0.0, 1.0)), *FACT,
                       _time('confirmed_at'), _link('supersedes', 'attribute', True), _link('superseded_by', 'attribute', True),
                       _vector('embedding')),
         required_links=('entity',)),
    Kind('relates_to', (_link('in', 'entity'), _text('label'), _link('out', 'entity'), *FACT, _time('confirmed_at')),
         required_links=('in', 'out')),
    Kind('action', (_link('actor', 'entity'), _text('verb'), _link('object', 'entity', True), _text('object_text', True), _text('summary'),
                    _time('occurred_at', True), *FACT),
         required_links=('actor',)),
    Kind('instruction', (_text('label'), _text('description'), _text('label_key'), _text('description_key'), Field('active', 'bool'),
                         Field('merged_count', 'int', bounds=(0, 2**31)), _link('source_turn', 'turn', True),
                         Field('source_turns', 'links', target='turn'), SCOPES, CREATED, _time('updated_at'))),
    Kind('uncertainty', (_text('about'), _text('reason'), _text('kind'), _link('entity', 'entity', True), _text('key', True),
                         _link('source_turn', 'turn', True), Field('resolved', 'bool'), _link('resolved_by', 'turn', True),
                         _time('resolved_at', True), SCOPES, CREATED)),
    Kind('retrieval_trace', (_text('query'), _text('question_key', True), _text('mode'), _text('endpoint'), _text('source', True),
                             Field('tier_entered', 'int', bounds=(0, 9)), _text('tier_reason'), Field('candidates', 'objects'),
                             Field('returned', 'objects'), Field('latency_ms', 'float', bounds=(0.0, 1e12)),
                             _text('visibility_fingerprint'), Field('read_region', 'strings', True), _text('principal', True),
                             _text('acting_principal', True), _link('session', 'session', True), Field('cache_eligible', 'bool'),
                             _link('response', 'response_trace', True), CREATED, _vector('query_embedding')),
         trace=True),
    Kind('response_trace', (_text('message'), _text('reply'), _text('model', True), Field('tokens', 'object', True),
                            Field('latency_ms', 'float', bounds=(0.0, 1e12)), Field('cached', 'bool'),
                            _link('reused_from', 'response_trace', True), Field('cache_eligible', 'bool'), Field('cited', 'objects'),
                            Field('cited_entities', 'links', target='entity'), Field('cited_entity_refs', 'strings'),
                            Field('read_sources', 'objects'), _link('retrieval_trace', 'retrieval_trace', True),
                            _text('visibility_fingerprint'), Field('read_region', 'strings', True), _text('principal', True),
                            _text('acting_principal', True), _link('session', 'session', True), _text('endpoint'), CREATED),
         trace=True),
    Kind('decision_trace', (Field('input', 'object'), Field('outcomes', 'objects'), _text('principal'), _text('acting_principal', True),
                            _link('turn', 'turn', True), Field('latency_ms', 'float', bounds=(0.0, 1e12)),
                            Field('scope_sets', 'scopes', True), CREATED),
         trace=True),
)  # fmt: skip
KIND = {kind.name: kind for kind in KINDS}
_FIELDS = {kind.name: {f.wire: f for f in kind.fields} for kind in KINDS}


@dataclass(frozen=True)
class Header:
    context: str
    exported_at: str
    counts: dict[str, int]
    embedding_model: str
    embedding_dimension: int
    traces: bool

    def to_json(self) -> dict[str, Any]:
        return {
            'format': FORMAT,
            'version': VERSION,
            'context': self.context,
            'exportedAt': self.exported_at,
            'counts': self.counts,
            'embedding': {'model': self.embedding_model, 'dimension': self.embedding_dimension},
            'traces': self.traces,
        }

    @property
    def records(self) -> int:
        return sum(self.counts.values())

    def kinds(self) -> list[str]:
        """The record kinds of this export, in file order."""
        return [CONTEXT, *(k.name for k in KINDS if self.traces or not k.trace)]


@dataclass(frozen=True)
class ContextSettings:
    config: dict[str, Any]
    description: str | None
    decay_epoch: int
    scheduled_day: str | None


@dataclass(frozen=True)
class Record:
    """One checked record: its kind, its key (None for the ``context`` record) and its values by stored field name —
    times as ``Instant``, links as keys, vectors as floats, everything else as JSON."""

    kind: str
    key: str | tuple[str, str] | None
    values: dict[str, Any]
    line: int
    settings: ContextSettings | None = None  # the context record's


def parse_header(value: Any) -> Header:
    """The header (line 1), or FormatError saying what is wrong with it."""
    if not isinstance(value, dict) or value.get('format') != FORMAT:
        raise FormatError(1, f'not an agent-memory export (the first line must be a header with "format": "{FORMAT}")')
    if value.get('version') != VERSION:
        raise FormatError(1, f'format version {value.get("version")!r} is not supported (this version reads {VERSION})')
    counts, embedding, traces = value.get('counts'), value.get('embedding'), value.get('traces', False)
    if not isinstance(counts, dict) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values()):
        raise FormatError(1, 'counts must map each kind to a number of records')
    if not isinstance(traces, bool):
        raise FormatError(1, 'traces must be true or false')
    unknown = sorted(set(counts) - {CONTEXT, *(k.name for k in KINDS if traces or not k.trace)})
    if unknown:
        raise FormatError(1, f'counts name unknown kinds: {", ".join(unknown)}')
    if counts.get(CONTEXT) != 1:
        raise FormatError(1, 'an export holds exactly one context record')
    if not isinstance(embedding, dict) or not isinstance(embedding.get('model'), str) or not _count(embedding.get('dimension'), 1, 65536):
        raise FormatError(1, 'embedding must say the model and dimension of the vectors')
    context, exported_at = value.get('context'), value.get('exportedAt')
    if not isinstance(context, str) or not isinstance(exported_at, str):
        raise FormatError(1, 'context and exportedAt must be strings')
    return Header(context, exported_at, dict(counts), embedding['model'], embedding['dimension'], traces)


def check_record(value: Any, line: int, header: Header) -> Record:
    """Line ``line`` as a checked record, or FormatError naming the line and the problem."""
    if not isinstance(value, dict):
        raise FormatError(line, 'a record must be a JSON object')
    kind_name = value.get('record')
    if kind_name not in header.kinds():
        raise FormatError(line, f'unknown record kind {kind_name!r}' + (' (this export has no traces)' if kind_name in KIND else ''))
    if kind_name == CONTEXT:
        return Record(CONTEXT, None, {}, line, _context(value, line))
    kind = KIND[kind_name]
    fields = {wire: kind.field(wire) for wire in value if wire not in ('record', 'id')}
    unknown = sorted(wire for wire, f in fields.items() if f is None)
    if unknown:
        raise FormatError(line, f'{kind.name} has no field {unknown[0]!r}')
    key = _entity_key(value.get('id'), line, f'{kind.name}.id') if kind.entity_key else _key(value.get('id'), line, f'{kind.name}.id')
    values: dict[str, Any] = {}
    for field in kind.fields:
        raw = value.get(field.wire)
        if raw is None:
            if not field.optional:
                raise FormatError(line, f'{kind.name}.{field.wire} is required')
            continue
        values[field.name] = _check(field, raw, line, f'{kind.name}.{field.wire}', header.embedding_dimension)
    return Record(kind.name, key, values, line)


def _context(value: dict[str, Any], line: int) -> ContextSettings:
    extra = sorted(set(value) - {'record', 'config', 'description', 'decayEpoch', 'scheduledDay'})
    if extra:
        raise FormatError(line, f'context has no field {extra[0]!r}')
    config, description, day = value.get('config', {}), value.get('description'), value.get('scheduledDay')
    if not isinstance(config, dict):
        raise FormatError(line, 'context.config must be an object')
    _valid_json(config, line, 'context.config')
    if description is not None and not isinstance(description, str):
        raise FormatError(line, 'context.description must be a string')
    if day is not None and not (isinstance(day, str) and re.fullmatch(r'\d{4}-\d{2}-\d{2}', day)):
        raise FormatError(line, 'context.scheduledDay must be a YYYY-MM-DD day')
    epoch = value.get('decayEpoch', 0)
    if not _count(epoch, 0, 2**62):
        raise FormatError(line, 'context.decayEpoch must be a whole number of decay steps')
    return ContextSettings(config, description, epoch, day)


def _check(field: Field, raw: Any, line: int, where: str, dimension: int) -> Any:
    kind = field.type
    if kind == 'string':
        value = _string(raw, line, where)
        if field.choices and value not in field.choices:
            raise FormatError(line, f'{where} must be one of {", ".join(field.choices)} (not {value!r})')
        return value
    if kind in ('int', 'float'):
        ok = isinstance(raw, int | float) and not isinstance(raw, bool) and (kind == 'float' or isinstance(raw, int))
        if not ok or (kind == 'float' and not math.isfinite(raw)):
            raise FormatError(line, f'{where} must be {"a whole number" if kind == "int" else "a finite number"}')
        if field.bounds and not field.bounds[0] <= raw <= field.bounds[1]:
            raise FormatError(line, f'{where} must lie in [{field.bounds[0]:g}, {field.bounds[1]:g}]')
        return float(raw) if kind == 'float' else raw
    if kind == 'bool':
        if not isinstance(raw, bool):
            raise FormatError(line, f'{where} must be true or false')
        return raw
    if kind == 'object':
        if not isinstance(raw, dict):
            raise FormatError(line, f'{where} must be an object')
        return _valid_json(raw, line, where)
    if kind == 'objects':
        if not isinstance(raw, list) or not all(isinstance(item, dict) for item in raw):
            raise FormatError(line, f'{where} must be a list of objects')
        return _valid_json(raw, line, where)
    if kind == 'time':
        return parse_instant(raw, line, where)
    if kind == 'scopes':
        if not isinstance(raw, list) or not all(isinstance(c, list) and all(isinstance(s, str) for s in c) for c in raw):
            raise FormatError(line, f'{where} must be a list of lists of scope paths')
        return _valid_json(raw, line, where)
    if kind == 'strings':
        if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
            raise FormatError(line, f'{where} must be a list of strings')
        return _valid_json(raw, line, where)
    if kind == 'link':
        return _entity_key(raw, line, where) if field.target == 'entity' else _key(raw, line, where)
    if kind == 'links':
        if not isinstance(raw, list):
            raise FormatError(line, f'{where} must be a list of keys')
        return [_entity_key(k, line, where) if field.target == 'entity' else _key(k, line, where) for k in raw]
    return decode_vector(raw, dimension, line, where)


def _string(raw: Any, line: int, where: str) -> str:
    if not isinstance(raw, str):
        raise FormatError(line, f'{where} must be a string')
    try:
        raw.encode('utf-8')
    except UnicodeEncodeError:
        raise FormatError(line, f'{where} holds invalid Unicode (an unpaired surrogate)') from None
    return raw


def _valid_json(value: Any, line: int, where: str) -> Any:
    """``value`` when every string in it (keys included) is valid Unicode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            _string(item, line, where)
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise FormatError(line, f'{where} holds a number that is not finite')
    return value


def _key(raw: Any, line: int, where: str) -> str:
    if not isinstance(raw, str) or not 0 < len(raw) <= MAX_KEY_CHARS:
        raise FormatError(line, f'{where} must be a key of 1 to {MAX_KEY_CHARS} characters')
    return _string(raw, line, where)


def _entity_key(raw: Any, line: int, where: str) -> tuple[str, str]:
    if not (isinstance(raw, list) and len(raw) == 2 and raw[0] in ENTITY_TYPES and isinstance(raw[1], str) and raw[1]):
        raise FormatError(line, f'{where} must be an entity key [type, name] with a known type')
    return raw[0], _key(raw[1], line, where)


def _count(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


# ---- times -----------------------------------------------------------------------------------------------------------------

_INSTANT = re.compile(r'(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})')


def parse_instant(raw: Any, line: int, where: str) -> Instant:
    found = _INSTANT.fullmatch(raw) if isinstance(raw, str) else None
    if found is None:
        raise FormatError(line, f'{where} must be an RFC 3339 time such as 2026-01-31T12:00:00.123456789Z')
    year, month, day, hour, minute, second, fraction, offset = found.groups()
    digits = (fraction or '').ljust(9, '0')
    try:
        zone = dt.UTC if offset == 'Z' else dt.datetime.strptime(offset, '%z').tzinfo
        moment = dt.datetime(int(year), int(month), int(day), int(hour), int(minute), int(second), int(digits[:6]), tzinfo=zone)
        return Instant(moment.astimezone(dt.UTC), int(digits[6:]))
    except (ValueError, OverflowError):
        raise FormatError(line, f'{where} is not a real time ({raw!r})') from None


def format_instant(moment: dt.datetime, nanosecond: int = 0) -> str:
    utc = moment.astimezone(dt.UTC)
    return utc.strftime('%Y-%m-%dT%H:%M:%S.') + f'{utc.microsecond:06d}{nanosecond:03d}Z'


# ---- vectors -----------------------------------------------------------------------------------------------------------------


def encode_vector(values: list[float]) -> str:
    """``f32:`` and the floats as 32-bit when that is exact (the local model's vectors), else ``f64:``."""
    try:
        packed = struct.pack(f'<{len(values)}f', *values)
        if list(struct.unpack(f'<{len(values)}f', packed)) == values:
            return 'f32:' + base64.b64encode(packed).decode()
    except OverflowError:
        pass
    return 'f64:' + base64.b64encode(struct.pack(f'<{len(values)}d', *values)).decode()


def decode_vector(raw: Any, dimension: int, line: int, where: str) -> list[float]:
    width = {'f32:': 4, 'f64:': 8}.get(raw[:4]) if isinstance(raw, str) else None
    if width is None:
        raise FormatError(line, f'{where} must be "f32:" or "f64:" and base64')
    try:
        packed = base64.b64decode(raw[4:], validate=True)
    except (binascii.Error, ValueError):
        raise FormatError(line, f'{where} is not valid base64') from None
    if len(packed) != dimension * width:
        raise FormatError(line, f'{where} must hold {dimension} numbers (the export says its vectors have {dimension} dimensions)')
    values = list(struct.unpack(f'<{dimension}{"f" if width == 4 else "d"}', packed))
    magnitude = math.sqrt(math.fsum(v * v for v in values))
    if not 0 < magnitude < 3.4e38:  # the database refuses a zero, infinite or NaN vector
        raise FormatError(line, f'{where} must be a finite vector that is not zero')
    return values
