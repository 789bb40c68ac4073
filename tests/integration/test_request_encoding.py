"""Requests are encoded by cbor2's C encoder (``agent_memory.db.sdk.encode``): the same bytes as the SDK's own
pure-Python encoder for every value shape the service binds, and the engine reads them back as sent."""

from __future__ import annotations

import datetime as dt
import uuid
from decimal import Decimal
from typing import Any

import pytest
import surrealdb.request_message.descriptors.cbor_ws as request_encoding
from surrealdb.data import cbor as sdk_cbor
from surrealdb.data.types.datetime import PreciseDatetime
from surrealdb.data.types.duration import Duration
from surrealdb.data.types.set import SurrealSet
from surrealdb.data.types.table import Table

from agent_memory.db import sdk
from agent_memory.db.connection import Database

UTC = dt.UTC
VALUES: dict[str, Any] = {
    'none': None,
    'nested_none': {'a': [None, {'b': None}], 'c': (None, 1)},
    'text': 'Zoë 名前 🙂',
    'empty': '',
    'ints': [0, 1, -1, 23, 24, 255, 256, 65536, 2**32, 2**63 - 1, -(2**63)],
    'floats': [0.0, 0.1, -1.5e300, 1e-30, float('inf'), float('-inf')],
    'bools': [True, False],
    'bytes': b'abc',
    'when': dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=UTC),
    'when_whole': dt.datetime(1970, 1, 1, tzinfo=UTC),
    'when_offset': dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    'precise': PreciseDatetime.from_seconds_and_nanos(1_700_000_000, 123456789),
    'record_ids': [sdk.RecordID('thing', 'plain'), sdk.RecordID('thing', ['person', 'ada']), sdk.RecordID('thing', {'k': 3, 'n': None})],
    'table': Table('thing'),
    'duration': Duration.parse('1h30m'),
    'uuid': uuid.UUID('0190fd5a-3b7a-7c7e-9d2a-5f0b3e6d8a11'),
    'decimal': Decimal('1.25'),
    'set': {3, 1, 2},
    'surreal_set': SurrealSet([1, 2]),
    'vector': sdk.Vector([0.25, -0.5, 1e-30]),
    'deep': [[1, [2, [3, [None]]]], {'a': {'b': [sdk.RecordID('t', 1), None]}}],
}


SDK_ONLY = ('table', 'duration', 'decimal')  # types the service never binds: such a message goes to the SDK's encoder


@pytest.mark.parametrize('name', VALUES)
def test_the_c_encoder_writes_the_bytes_the_sdk_encoder_writes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a request message binding one value shape the service sends (NONE, ints at every CBOR width, datetimes
    # with and without nanoseconds, record ids of every id shape, sets, vectors, nesting)
    message = {'id': 'x', 'method': 'query', 'params': ['RETURN $v;', {'v': VALUES[name]}]}
    expected = sdk_cbor.encode(message)
    if name not in SDK_ONLY:
        monkeypatch.setattr(sdk_cbor, 'encode', lambda _: pytest.fail('the SDK encoder wrote it'))
    # When encoded, Then the bytes are the SDK encoder's, written by the C encoder unless the type is one it leaves
    assert sdk.encode(message) == expected


def test_an_integer_surrealdb_cannot_hold_is_refused_as_the_sdk_refuses_it() -> None:
    # Given integers one past the signed 64-bit range, When encoded, Then both encoders refuse them (the engine would
    # store another number)
    for value in (2**63, -(2**63) - 1):
        with pytest.raises(ValueError):
            sdk_cbor.encode({'v': [value]})
        with pytest.raises(ValueError):
            sdk.encode({'v': [value]})


def test_the_engine_reads_back_what_was_sent() -> None:
    # Given a real embedded engine, When every value is bound as a parameter and returned, Then it comes back as sent
    # (None as NONE, not NULL: `$v = NONE` holds)
    database = Database('mem://', 'encoding')
    try:
        sent = {k: v for k, v in VALUES.items() if k not in ('table', 'duration', 'set', 'surreal_set', 'decimal', 'uuid')}
        back = database.query('d', 'RETURN $v; RETURN $v.none = NONE AND $v.nested_none.a[0] = NONE;', {'v': sent})
        assert back[1] is True
        assert back[0]['record_ids'] == sent['record_ids'] and back[0]['ints'] == sent['ints']
        assert back[0]['when'] == sent['when'] and back[0]['precise'] == sent['precise']
        assert back[0]['vector'] == list(sent['vector']) and back[0]['text'] == sent['text']
    finally:
        database.close()


def test_every_transport_encodes_with_it() -> None:
    # Given the SDK's request encoding (every transport builds its messages there), Then it encodes with the C encoder
    assert request_encoding.encode is sdk.encode
