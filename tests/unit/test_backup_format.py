"""The export format's checks (backup_format): every line of a file is refused with its number and the reason, and
values come back exactly as they were written (times to the nanosecond, vectors bit for bit)."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest

from agent_memory.backup_format import (
    CONTEXT,
    KINDS,
    FormatError,
    Header,
    Instant,
    check_record,
    decode_vector,
    encode_vector,
    format_instant,
    parse_header,
    parse_instant,
)

HEADER = {'format': 'agent-memory-export', 'version': 1, 'context': 'dev', 'exportedAt': '2026-12-01T00:00:00Z',
          'counts': {'context': 1, 'entity': 1, 'attribute': 1}, 'embedding': {'model': 'm', 'dimension': 4}, 'traces': False}  # fmt: skip
ENTITY = {'record': 'entity', 'id': ['person', 'priya'], 'name': 'Priya', 'type': 'person', 'memoryCategory': 'identity',
          'importanceBase': 1.0, 'decayEpoch': 0, 'scopeSets': [['/']], 'createdAt': '2026-12-01T10:00:00.123456789Z',
          'updatedAt': '2026-12-01T10:00:00Z'}  # fmt: skip


def header(**changes: Any) -> Header:
    return parse_header({**HEADER, **changes})


def test_the_documentation_names_every_kind_and_field() -> None:
    doc = (Path(__file__).resolve().parents[2] / 'docs' / 'backup-format.md').read_text(encoding='utf-8')
    missing = [f'{k.name}.{f.wire}' for k in KINDS for f in k.fields if f'`{f.wire}`' not in doc]
    assert missing == [] and [k.name for k in KINDS if f'`{k.name}`' not in doc] == []


def test_every_kind_names_each_field_once_with_a_known_type() -> None:
    for kind in KINDS:
        names = [f.wire for f in kind.fields]
        assert len(names) == len(set(names)) and 'record' not in names and 'id' not in names, kind.name
        assert all(f.type != 'link' or f.target for f in kind.fields) and set(kind.required_links) <= {f.name for f in kind.fields}


def test_a_record_comes_back_as_checked_values() -> None:
    record = check_record({**ENTITY, 'embedding': encode_vector([0.5, 0.5, 0.5, 0.5])}, 3, header())
    assert (record.kind, record.key, record.line) == ('entity', ('person', 'priya'), 3)
    assert record.values['created_at'] == Instant(dt.datetime(2026, 12, 1, 10, 0, 0, 123456, tzinfo=dt.UTC), 789)
    assert record.values['embedding'] == [0.5] * 4 and record.values['importance_base'] == 1.0
    assert 'self_principal' not in record.values  # an absent optional field stays absent
    settings = check_record({'record': 'context', 'config': {'x': 1}, 'decayEpoch': 3, 'scheduledDay': '2026-12-01'}, 2, header())
    assert settings.kind == CONTEXT and settings.settings is not None and settings.settings.decay_epoch == 3


@pytest.mark.parametrize(
    ('change', 'reason'),
    [
        ({'record': 'entities'}, "unknown record kind 'entities'"),
        ({'record': 'retrieval_trace'}, "unknown record kind 'retrieval_trace' (this export has no traces)"),
        ({'id': ['planet', 'mars']}, 'entity.id must be an entity key [type, name] with a known type'),
        ({'id': 'priya'}, 'entity.id must be an entity key'),
        ({'name': None}, 'entity.name is required'),
        ({'name': 7}, 'entity.name must be a string'),
        ({'name': 'bad \ud800'}, 'entity.name holds invalid Unicode'),
        ({'memoryCategory': 'gossip'}, 'entity.memoryCategory must be one of identity, knowledge, context'),
        ({'importanceBase': 2.5}, 'entity.importanceBase must lie in [0, 2]'),
        ({'importanceBase': True}, 'entity.importanceBase must be a finite number'),
        ({'decayEpoch': 1.5}, 'entity.decayEpoch must be a whole number'),
        ({'scopeSets': ['/']}, 'entity.scopeSets must be a list of lists of scope paths'),
        ({'createdAt': '2026-02-30T00:00:00Z'}, 'entity.createdAt is not a real time'),
        ({'createdAt': '2026-12-01 10:00'}, 'entity.createdAt must be an RFC 3339 time'),
        ({'embedding': 'f16:AAAA'}, 'entity.embedding must be "f32:" or "f64:" and base64'),
        ({'embedding': 'f32:@@@@'}, 'entity.embedding is not valid base64'),
        ({'embedding': encode_vector([0.0] * 4)}, 'entity.embedding must be a finite vector that is not zero'),
        ({'embedding': encode_vector([1.0] * 5)}, 'entity.embedding must hold 4 numbers'),
        ({'favouriteColour': 'blue'}, "entity has no field 'favouriteColour'"),
    ],
)
def test_a_bad_record_is_refused_with_its_line_and_reason(change: dict[str, Any], reason: str) -> None:
    with pytest.raises(FormatError) as refused:
        check_record({**ENTITY, **change}, 7, header())
    assert refused.value.line == 7 and str(refused.value).startswith(f'line 7: {reason}')


def test_a_bad_header_is_refused_at_line_one() -> None:
    for value, reason in (([], 'not an agent-memory export'), ({**HEADER, 'format': 'other'}, 'not an agent-memory export'),
                          ({**HEADER, 'version': 2}, 'format version 2 is not supported'),
                          ({**HEADER, 'counts': {'context': 1, 'gossip': 2}}, 'counts name unknown kinds: gossip'),
                          ({**HEADER, 'counts': {'context': 1, 'retrieval_trace': 2}}, 'counts name unknown kinds: retrieval_trace'),
                          ({**HEADER, 'counts': {'entity': 1}}, 'exactly one context record'),
                          ({**HEADER, 'counts': {'context': 1, 'entity': -1}}, 'counts must map each kind'),
                          ({**HEADER, 'embedding': {'model': 'm'}}, 'embedding must say the model and dimension')):  # fmt: skip
        with pytest.raises(FormatError, match=reason) as refused:
            parse_header(value)
        assert refused.value.line == 1
    assert header(traces=True, counts={'context': 1, 'retrieval_trace': 2}).kinds()[-3:] == ['retrieval_trace', 'response_trace',
                                                                                                'decision_trace']  # fmt: skip


def test_times_keep_their_nanoseconds_and_offsets_become_utc() -> None:
    instant = parse_instant('2026-12-01T10:00:00.123456789Z', 1, 't')
    assert format_instant(*instant) == '2026-12-01T10:00:00.123456789Z'
    assert format_instant(*parse_instant('2026-12-01T12:30:00+02:30', 1, 't')) == '2026-12-01T10:00:00.000000000Z'
    assert parse_instant('2026-12-01T10:00:00.5Z', 1, 't').moment.microsecond == 500000


def test_vectors_are_exact_in_32_or_64_bits() -> None:
    # Given a model's float32 vector and one that float32 cannot hold exactly
    as_float32 = [0.25, -0.5, 0.125, 1.0]
    as_float64 = [0.1, 0.2, 0.3, math.pi]
    # When encoded and decoded, Then each comes back bit for bit, the first in the smaller encoding
    assert encode_vector(as_float32).startswith('f32:') and decode_vector(encode_vector(as_float32), 4, 1, 'v') == as_float32
    assert encode_vector(as_float64).startswith('f64:') and decode_vector(encode_vector(as_float64), 4, 1, 'v') == as_float64
    assert len(encode_vector([0.5] * 384)) == 4 + 2048


def test_a_context_record_is_checked_too() -> None:
    for change, reason in (({'config': []}, 'context.config must be an object'), ({'decayEpoch': -1}, 'context.decayEpoch'),
                           ({'scheduledDay': 'Monday'}, 'context.scheduledDay must be a YYYY-MM-DD day'),
                           ({'colour': 'x'}, "context has no field 'colour'")):  # fmt: skip
        with pytest.raises(FormatError, match=reason):
            check_record({'record': 'context', 'config': {}, **change}, 2, header())
    assert json.dumps(header().to_json())  # the header is JSON as it is written
