"""The SurrealDB SDK without its package ``__init__`` (which imports ``aiohttp`` and ``requests`` for HTTP
transports): only the transport the configured URL needs is imported (``agent_memory.lazy_package``)."""

from __future__ import annotations

import importlib
import struct
from collections.abc import Sequence
from typing import Any

from agent_memory.lazy_package import defer_package_init

defer_package_init('surrealdb')

import surrealdb.connections.blocking_ws as blocking_ws  # noqa: E402  # the ws transport; the embedded one subclasses it
from surrealdb.cbor import _encoder as cbor_encoder  # noqa: E402
from surrealdb.connections.url import Url, UrlScheme  # noqa: E402
from surrealdb.data.types.record_id import RecordID  # noqa: E402
from surrealdb.errors import SurrealError, UnsupportedEngineError  # noqa: E402

_EMBEDDED = {UrlScheme.MEM, UrlScheme.MEMORY, UrlScheme.FILE, UrlScheme.SURREALKV, UrlScheme.SURREALKV_VERSIONED}


def connect(url: str) -> Any:
    """A blocking connection to ``url``: the transport ``surrealdb.Surreal`` would pick for its scheme."""
    scheme = Url(url).scheme
    if scheme in _EMBEDDED:
        module, cls = 'blocking_embedded', 'BlockingEmbeddedSurrealConnection'
    elif scheme in (UrlScheme.WS, UrlScheme.WSS):
        module, cls = 'blocking_ws', 'BlockingWsSurrealConnection'
    elif scheme in (UrlScheme.HTTP, UrlScheme.HTTPS):
        module, cls = 'blocking_http', 'BlockingHttpSurrealConnection'
    else:
        raise UnsupportedEngineError(url)
    return getattr(importlib.import_module(f'surrealdb.connections.{module}'), cls)(url=url)


class Vector(list[float]):
    """An embedding bound as a query parameter. The SDK's pure-Python CBOR encoder makes one call per float (about
    1.3 ms per 384-float vector under load, most of a write's Python time); this type is packed in one ``struct`` call
    into the same bytes: an array of 64-bit floats."""


def vector(values: Sequence[float] | None) -> Vector | None:
    return None if values is None else Vector(values)


def _encode_vector(encoder: Any, value: Vector) -> None:
    encoder.encode_length(4, len(value))  # major type 4: array
    encoder.fp.write(struct.pack('>' + 'Bd' * len(value), *[part for v in value for part in (0xFB, float(v))]))  # 0xFB: float64


cbor_encoder.default_encoders[Vector] = _encode_vector  # every encoder the SDK builds copies this table

__all__ = ['RecordID', 'SurrealError', 'Vector', 'blocking_ws', 'connect', 'vector']
