"""Packed float lists are byte for byte what the SDK's own encoder writes, and everything else still goes through it."""

from __future__ import annotations

import random

import pytest
import surrealdb.cbor._encoder as cbor_encoder
from surrealdb.data import cbor

from agent_memory.db import vector_wire

VECTOR = [random.Random(7).uniform(-1, 1) for _ in range(384)]
VALUES = {
    'vector': VECTOR,
    'nested': [VECTOR[:16], VECTOR[16:48]],
    'short': [0.5] * (vector_wire.MIN_PACKED - 1),
    'non_finite': [0.1] * 20 + [float('nan'), float('inf')],
    'ints': list(range(40)),
    'mixed': [0.5] * 30 + [1],
    'empty': [],
}


def test_packed_lists_are_the_sdks_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Given values with vectors and lists that are not vectors, When encoded with and without the packed encoder, Then
    # the bytes are identical and decode back to the same values
    vector_wire.install()
    packed = cbor.encode(VALUES)
    monkeypatch.setitem(cbor_encoder.default_encoders, list, cbor_encoder.CBOREncoder.encode_array)
    assert cbor.encode(VALUES) == packed
    decoded = cbor.decode(packed)
    assert decoded['vector'] == VECTOR and decoded['ints'] == VALUES['ints'] and decoded['nested'] == VALUES['nested']


def test_the_service_connection_installs_it() -> None:
    import agent_memory.db.sdk  # noqa: F401  # the module every connection is made through

    assert cbor_encoder.default_encoders[list] is vector_wire.encode_list
