"""Embeddings are bound as ``Vector`` parameters: packed in one call into exactly the bytes the SDK's encoder writes."""

from __future__ import annotations

import math
import random

from surrealdb.data.cbor import decode, encode

from agent_memory.db.sdk import Vector, vector


def test_a_vector_encodes_to_the_same_bytes_as_the_list_of_its_floats() -> None:
    # Given a normalised 384-float vector, and the extremes a float can take
    values = [random.uniform(-1, 1) for _ in range(384)]
    norm = math.sqrt(sum(v * v for v in values))
    unit = [v / norm for v in values]
    for floats in (unit, [0.0, -0.0, 1e-300, -1e300, 0.1]):
        # When it is encoded as a Vector and as a plain list
        fast, plain = encode({'params': {'v': Vector(floats)}}), encode({'params': {'v': list(floats)}})
        # Then the bytes are identical and decode to the same floats
        assert fast == plain
        assert decode(fast)['params']['v'] == floats


def test_no_vector_stays_none() -> None:
    # Given a row without an embedding (a queued turn's chunk), When bound, Then it stays NONE
    assert vector(None) is None
    assert isinstance(vector([0.5]), Vector)
