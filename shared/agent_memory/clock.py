"""The clock: UTC now, RFC 3339 in and out, and the time-ordered record ids drawn from it (a leaf module)."""

from __future__ import annotations

import datetime as dt
import secrets
import time

# Every timestamp a caller sends lies in [EARLIEST, LATEST) (CONTRACT §12 via docs/security.md): well inside what the
# engine and Python both hold (Python stops at year 9999, the engine's CBOR decoder refused the SDK's unpadded years
# below 1000), and far beyond any real observation or validity. An observation may run MAX_SKEW ahead of the server
# clock (a client's clock drift) and then counts as now; later ones are refused.
EARLIEST = dt.datetime(1900, 1, 1, tzinfo=dt.UTC)
LATEST = dt.datetime(2200, 1, 1, tzinfo=dt.UTC)
MAX_SKEW = dt.timedelta(minutes=5)
RANGE_TEXT = 'timestamps must lie in [1900-01-01T00:00:00Z, 2200-01-01T00:00:00Z)'


def new_id() -> str:
    """Time-ordered, URL-safe record id: 12 hex digits of milliseconds + 10 random hex digits."""
    return f'{time.time_ns() // 1_000_000:012x}{secrets.token_hex(5)}'


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def iso(value: dt.datetime | None) -> str | None:
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace('+00:00', 'Z')


def when(value: object) -> str | None:
    """``iso`` of a stored timestamp, None for anything else (absent, NONE)."""
    return iso(value) if isinstance(value, dt.datetime) else None


def in_range(value: dt.datetime | None) -> bool:
    return value is not None and EARLIEST <= value < LATEST


def parse_timestamp(raw: str) -> dt.datetime:
    """A caller's RFC 3339 timestamp, in the accepted range (ValueError otherwise: the request models make it a 400)."""
    value = parse_rfc3339(raw)
    if not in_range(value):
        raise ValueError(RANGE_TEXT)
    return value


def parse_observation(raw: str) -> dt.datetime:
    """When something was said or observed: a timestamp in range and not after now + ``MAX_SKEW`` (a later one would
    be a known time in the future); within the skew it is now."""
    value = parse_timestamp(raw)
    now = utcnow()
    if value > now + MAX_SKEW:
        raise ValueError('an observation time may not be in the future (at most 5 minutes of clock skew)')
    return min(value, now)


def parse_rfc3339(raw: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(raw.replace('Z', '+00:00'))
    if value.tzinfo is None:
        raise ValueError('timestamp needs a timezone offset')
    try:
        return value.astimezone(dt.UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 has no UTC equivalent; callers turn ValueError into a 400
        raise ValueError('timestamp out of range') from None
