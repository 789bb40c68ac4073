"""The clock: UTC now, RFC 3339 in and out, and the time-ordered record ids drawn from it (a leaf module)."""

from __future__ import annotations

import datetime as dt
import secrets
import time


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


def parse_rfc3339(raw: str) -> dt.datetime:
    value = dt.datetime.fromisoformat(raw.replace('Z', '+00:00'))
    if value.tzinfo is None:
        raise ValueError('timestamp needs a timezone offset')
    try:
        return value.astimezone(dt.UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 has no UTC equivalent; callers turn ValueError into a 400
        raise ValueError('timestamp out of range') from None
