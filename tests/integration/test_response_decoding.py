"""Responses are decoded by cbor2's C decoder (``agent_memory.db.sdk.decode``): every value the SDK's own pure-Python
decoder gives, from the real engine's bytes, and the transports use it."""

from __future__ import annotations

from typing import Any

import pytest
import surrealdb.connections.blocking_embedded as blocking_embedded
import surrealdb.connections.utils_mixin as utils_mixin
from surrealdb.data import cbor as sdk_cbor
from surrealdb.data.types.null import Null

from agent_memory.db import sdk
from agent_memory.db.connection import Database

VALUES = """
DEFINE TABLE IF NOT EXISTS thing SCHEMALESS;
CREATE thing:plain SET n = 1;
CREATE thing:['person', 'ada'] SET n = 2;
CREATE thing:{ kind: 'x', at: 3 } SET n = 3;
SELECT * FROM thing ORDER BY n;
RETURN {
    text: 'Zoë 名前 🙂', empty: '', big: 9223372036854775807, small: -9223372036854775808, float: 0.1, neg: -1.5e300,
    yes: true, none: NONE, when: d'2024-02-29T23:59:59.123456789Z', epoch: d'1970-01-01T00:00:00Z',
    span: 1h30m, zero: 0s, dec: 1.25dec, id: u'0190fd5a-3b7a-7c7e-9d2a-5f0b3e6d8a11', set: <set> [3, 1, 2],
    nested: [[1, [2, [3]]], { a: { b: [thing:['person', 'ada'], NONE] } }], bytes: <bytes> 'abc',
    ids: [thing:plain, thing:['person', 'ada'], thing:{ kind: 'x', at: 3 }], vector: [0.25, -0.5, 1e-30]
};
"""


def run(sql: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], bytes]:
    """``sql``'s results on a fresh embedded connection, and the raw bytes the engine answered with."""
    found: list[bytes] = []
    database = Database('mem://', 'decoding')
    monkeypatch.setattr(blocking_embedded, 'decode', lambda data: found.append(data) or sdk.decode(data))
    try:
        return database.query('d', sql), found[-1]
    finally:
        database.close()


def test_the_c_decoder_gives_every_value_the_sdk_decoder_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given the engine's bytes for record ids of every id shape, unicode, extreme ints and floats, datetimes with
    # nanoseconds, durations, decimals, uuids, sets, bytes, NONE and nesting
    _, raw = run(VALUES, monkeypatch)
    # When both decoders read them, Then the values, and their types down to every nested element, are the same
    ours, theirs = sdk.decode(raw), sdk_cbor.decode(raw)
    assert ours == theirs
    assert types(ours) == types(theirs)
    result = ours['result'][-1]['result']
    assert result['when'].isoformat_with_nanoseconds().endswith('.123456789Z') and result['none'] is None
    assert result['ids'][1].id == ['person', 'ada'] and len(ours['result'][-2]['result']) == 3


def types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [types(v) for v in value]
    return type(value).__name__


def test_null_decodes_to_none_where_the_sdk_gives_its_null(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a NULL (this schema stores none: every optional field is NONE), When decoded, Then it is None (the one
    # documented difference from the SDK's Null)
    result, raw = run('RETURN [NULL, NONE];', monkeypatch)
    assert result == [[None, None]]
    assert sdk_cbor.decode(raw)['result'][-1]['result'] == [Null, None]


def test_every_transport_decodes_with_it() -> None:
    # Given a connection of each kind the service opens, Then its module decodes with the C decoder
    Database('mem://', 'decoding').close()
    assert blocking_embedded.decode is sdk.decode
    assert utils_mixin.decode is sdk.decode  # the ws and http transports
