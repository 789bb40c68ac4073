"""Embedding vectors on the SurrealDB wire, packed in one step instead of one encoder call per float.

The SDK's pure-Python CBOR encoder spends ~0.5 ms on a 384-float list (a method call, two checks and a
``struct.pack`` per element); a /chat cache hit sends three. A list of finite floats is written here as the
same bytes the SDK would write (a CBOR array of float64: ``0xfb`` + 8 bytes big-endian each) with one
``struct.pack``; anything else goes to the SDK's own list encoder unchanged.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import surrealdb.cbor._encoder as cbor_encoder

MIN_PACKED = 16  # shorter lists are not vectors; the check would cost more than it saves
_FLOAT64 = 0xFB
_sdk_encode_array = cbor_encoder.CBOREncoder.encode_array


def encode_list(encoder: Any, value: list[Any]) -> None:
    n = len(value)
    if n < MIN_PACKED or not all(type(x) is float for x in value) or not math.isfinite(sum(value)):
        _sdk_encode_array(encoder, value)  # NaN/inf: the SDK writes them in half precision
        return
    packed = struct.pack(f'>{n}d', *value)
    out = bytearray(9 * n)
    out[0::9] = bytes([_FLOAT64]) * n
    for byte in range(8):
        out[byte + 1 :: 9] = packed[byte::8]
    encoder.encode_length(4, n)
    encoder.fp.write(out)


def install() -> None:
    """Every encoder the SDK creates from now on packs float lists (it copies ``default_encoders`` per call)."""
    cbor_encoder.default_encoders[list] = encode_list
