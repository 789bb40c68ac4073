"""Query parameters: page sizes, page cursors and other integers.

Integers are ASCII digits only, bounded, so hostile values are a 400 and never reach the database.

``str.isdigit`` accepts ``²`` (which ``int`` then refuses) and ``int`` accepts ``٣``, ``1_000`` and padding; digit
strings past 18 characters could overflow the database's 64-bit integers (or Python's int parsing limit).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from agent_memory.errors import BadRequest

_DIGITS = re.compile(r'[0-9]{1,18}')
MAX_OFFSET = 10**9  # pagination offsets (turn lists)
DEFAULT_LIMIT, MAX_LIMIT = 100, 500  # page sizes


def parse_int(raw: str | None, name: str, minimum: int, maximum: int, default: int) -> int:
    """``raw`` as an integer in ``minimum..maximum``; ``default`` when absent or empty; 400 otherwise."""
    if raw is None or raw == '':
        return default
    if not _DIGITS.fullmatch(raw) or not minimum <= int(raw) <= maximum:
        raise BadRequest(f'{name} must be an integer in {minimum}..{maximum}')
    return int(raw)


def parse_flag(raw: str | None, name: str) -> bool:
    """``true`` or ``false`` (absent: false); 400 otherwise."""
    if raw in (None, '', 'false'):
        return False
    if raw == 'true':
        return True
    raise BadRequest(f'{name} must be true or false')


def parse_limit(raw: str | None, default: int = DEFAULT_LIMIT, maximum: int = MAX_LIMIT) -> int:
    return parse_int(raw, 'limit', 1, maximum, default)


def encode_cursor(value: Any) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip('=')


def decode_cursor(raw: str | None) -> Any:
    """What ``encode_cursor`` encoded (None when absent); anything else a client sends is a 400."""
    if not raw:
        return None
    try:
        return json.loads(base64.urlsafe_b64decode(raw + '=' * (-len(raw) % 4)))
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise BadRequest('invalid cursor') from exc
