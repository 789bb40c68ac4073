"""The SurrealDB SDK without its package ``__init__`` (which imports ``aiohttp`` and ``requests`` for HTTP
transports): only the transport the configured URL needs is imported (``agent_memory.lazy_package``).

Every patch of the SDK's private modules lives here: the CBOR decoder and encoder (cbor2's C implementation), the
datetime range guard and the packed vector encoder. The SDK is a beta (``PATCHED_FOR``); before patching, the
attributes each patch replaces are checked, and an SDK without them refuses to start with a message naming them
(``tests/unit/test_sdk_patches.py`` fails the same way on an upgrade). docs/architecture.md, "The database SDK", has
the path to a stable release.
"""

from __future__ import annotations

import datetime as dt
import importlib
import importlib.metadata
import struct
import uuid
from collections.abc import Sequence
from typing import Any

import cbor2

from agent_memory.lazy_package import defer_package_init

defer_package_init('surrealdb')

import surrealdb.connections.blocking_ws as blocking_ws  # noqa: E402  # the ws transport; the embedded one subclasses it
import surrealdb.connections.utils_mixin as utils_mixin  # noqa: E402  # the ws and http transports decode here
import surrealdb.request_message.descriptors.cbor_ws as request_encoding  # noqa: E402  # every transport encodes here
from surrealdb.cbor import _encoder as cbor_encoder  # noqa: E402
from surrealdb.connections.url import Url, UrlScheme  # noqa: E402
from surrealdb.data import cbor as sdk_cbor  # noqa: E402
from surrealdb.data.types import constants  # noqa: E402
from surrealdb.data.types.datetime import PreciseDatetime  # noqa: E402
from surrealdb.data.types.record_id import RecordID  # noqa: E402
from surrealdb.data.types.set import SurrealSet  # noqa: E402
from surrealdb.errors import SurrealError, UnsupportedEngineError  # noqa: E402

PATCHED_FOR = '3.0.0b10'  # the SDK release the patches below were written against (shared/requirements.txt pins it)

# (module, attribute): what the patches replace or call. A missing one means the SDK changed under them.
PATCH_TARGETS: tuple[tuple[Any, str], ...] = (
    (utils_mixin, 'decode'),
    (request_encoding, 'encode'),
    (cbor_encoder, 'default_encoders'),
    (sdk_cbor, 'tag_decoder'),
    (sdk_cbor, 'encode'),
    (RecordID, '_unchecked'),
    (PreciseDatetime, 'from_seconds_and_nanos'),
    (PreciseDatetime, 'isoformat_with_nanoseconds'),
    (constants, 'TAG_NONE'),
    (constants, 'TAG_RECORD_ID'),
    (constants, 'TAG_DATETIME'),
    (constants, 'TAG_DATETIME_COMPACT'),
    (constants, 'TAG_SET'),
)


def missing_patch_targets() -> list[str]:
    return [f'{getattr(owner, "__name__", owner)}.{name}' for owner, name in PATCH_TARGETS if not hasattr(owner, name)]


def installed_version() -> str:
    return importlib.metadata.version('surrealdb')


class SdkChanged(RuntimeError):
    """The installed SDK no longer has what a patch of this module replaces."""


if _missing := missing_patch_targets():
    raise SdkChanged(
        f'surrealdb {installed_version()} lacks {", ".join(_missing)}, which agent_memory/db/sdk.py patches '
        f'(written for {PATCHED_FOR}): pin surrealdb=={PATCHED_FOR} or port the patches'
    )

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
    transport = importlib.import_module(f'surrealdb.connections.{module}')
    if hasattr(transport, 'decode'):
        setattr(transport, 'decode', decode)  # noqa: B010  # the embedded transport imports the SDK's decoder by name
    return getattr(transport, cls)(url=url)


# The engine holds datetimes far beyond Python's years 1..9999 (SurrealQL arithmetic can make them): such a value is read
# as the nearest end of Python's range, so no stored row can make a read fail. The accepted input range
# (clock.EARLIEST..LATEST) keeps every value the service writes well inside.
_FAR_PAST = dt.datetime.min.replace(tzinfo=dt.UTC)
_FAR_FUTURE = dt.datetime.max.replace(tzinfo=dt.UTC)


def _tag(decoder: Any, tag: cbor2.CBORTag) -> Any:
    number, value = tag.tag, tag.value
    if number == constants.TAG_NONE:
        return None
    if number == constants.TAG_RECORD_ID:
        return RecordID._unchecked(value[0], value[1])  # as the SDK does: the server chose the id
    if number == constants.TAG_DATETIME_COMPACT:
        seconds = value[0] if value else 0
        try:
            return PreciseDatetime.from_seconds_and_nanos(seconds, value[1] if len(value) > 1 else 0)
        except (OverflowError, ValueError, OSError):
            return _FAR_PAST if seconds < 0 else _FAR_FUTURE
    if number == constants.TAG_DATETIME:
        try:
            return sdk_cbor.tag_decoder(decoder, tag)  # type: ignore[arg-type]
        except (OverflowError, ValueError):
            return _FAR_PAST if str(value).startswith('-') else _FAR_FUTURE
    return sdk_cbor.tag_decoder(decoder, tag)  # type: ignore[arg-type]  # the SDK reads only .tag and .value


def decode(data: bytes) -> Any:
    """A SurrealDB response, decoded by cbor2's C decoder: the same values as the SDK's pure-Python decoder (record ids,
    datetimes with nanoseconds, NONE as None, its other tags through the SDK's own hook), in far less time. One
    difference, on purpose: a NULL is ``None`` too (the SDK's ``Null``); no
    field of this service's schema holds NULL."""
    return cbor2.loads(data, tag_hook=_tag)


setattr(utils_mixin, 'decode', decode)  # noqa: B010  # a private name of the SDK's (mypy: not exported)

_NONE = cbor2.CBORTag(constants.TAG_NONE, None)
_I64 = (-(2**63), 2**63 - 1)


class _Unlisted(Exception):
    """A value ``_wire`` does not convert: the message goes to the SDK's own encoder whole."""


_NATIVE = (bytes, dt.datetime, uuid.UUID)  # what cbor2's C encoder writes byte for byte as the SDK's encoder does


def _wire(value: Any) -> Any:
    """``value`` with what cbor2's C encoder would write differently from the SDK's encoder made explicit: None is
    SurrealDB's NONE (tag 6; a plain null is NULL), record ids and nanosecond datetimes are tagged, sets carry
    SurrealDB's set tag, and an int outside the signed 64-bit range is refused as the SDK refuses it (the engine would
    store another number). Other types of the SDK's (Table, Duration, Decimal, ranges, geometry) raise ``_Unlisted``."""
    kind = type(value)
    if kind is str or kind is float or kind is bool or kind is Vector:
        return value
    if value is None:
        return _NONE
    if kind is int:
        if not _I64[0] <= value <= _I64[1]:
            raise ValueError(f"integer {value} is outside SurrealDB's signed 64-bit range")
        return value
    if kind is dict:
        return {key: _wire(item) for key, item in value.items()}
    if kind is list or kind is tuple:
        return [_wire(item) for item in value]
    if kind is RecordID:
        return cbor2.CBORTag(constants.TAG_RECORD_ID, [value.table_name, _wire(value.id)])
    if kind is PreciseDatetime:
        return cbor2.CBORTag(constants.TAG_DATETIME, _padded_iso(value.isoformat_with_nanoseconds()))
    if isinstance(value, (set, frozenset, SurrealSet)):
        return cbor2.CBORTag(constants.TAG_SET, [_wire(item) for item in value])
    if kind in _NATIVE:
        return value
    raise _Unlisted(kind.__name__)


def _padded_iso(text: str) -> str:
    """The SDK writes a year below 1000 unpadded (``1-01-01T…``), which the engine refuses to decode ("Expected a valid
    Datetime value"): a row read back with such a date made every later request that sent it (a read's trace) a 500."""
    year, sep, rest = text.partition('-')
    return f'{int(year):04d}{sep}{rest}' if len(year) < 4 and year.isdigit() else text


def encode(message: Any) -> bytes:
    """A request to SurrealDB, encoded by cbor2's C encoder: the same bytes as the SDK's pure-Python encoder, in less
    time (most of what is left is ``_wire``'s walk). A message holding a type ``_wire`` does not list is encoded by the SDK's encoder."""
    try:
        wire = _wire(message)
    except _Unlisted:
        return sdk_cbor.encode(message)
    return cbor2.dumps(wire, timezone=dt.UTC)


setattr(request_encoding, 'encode', encode)  # noqa: B010  # imported there by name (mypy: not exported)


class Vector(list[float]):
    """An embedding bound as a query parameter. The SDK's pure-Python CBOR encoder makes one call per float (most of
    a write's Python time); this type is packed in one ``struct`` call
    into the same bytes: an array of 64-bit floats."""


def vector(values: Sequence[float] | None) -> Vector | None:
    return None if values is None else Vector(values)


def _encode_vector(encoder: Any, value: Vector) -> None:
    encoder.encode_length(4, len(value))  # major type 4: array
    encoder.fp.write(struct.pack('>' + 'Bd' * len(value), *[part for v in value for part in (0xFB, float(v))]))  # 0xFB: float64


cbor_encoder.default_encoders[Vector] = _encode_vector  # every encoder the SDK builds copies this table

__all__ = ['PreciseDatetime', 'RecordID', 'SurrealError', 'Vector', 'blocking_ws', 'connect', 'vector']
