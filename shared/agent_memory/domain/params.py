"""Integer query parameters: ASCII digits only, bounded, so hostile values are a 400 and never reach the database.

``str.isdigit`` accepts ``²`` (which ``int`` then refuses) and ``int`` accepts ``٣``, ``1_000`` and padding; digit
strings past 18 characters could overflow the database's 64-bit integers (or Python's int parsing limit).
"""

from __future__ import annotations

import re

from agent_memory.errors import BadRequest

_DIGITS = re.compile(r'[0-9]{1,18}')
MAX_OFFSET = 10**9  # pagination offsets (turn lists)


def parse_int(raw: str | None, name: str, minimum: int, maximum: int, default: int) -> int:
    """``raw`` as an integer in ``minimum..maximum``; ``default`` when absent or empty; 400 otherwise."""
    if raw is None or raw == '':
        return default
    if not _DIGITS.fullmatch(raw) or not minimum <= int(raw) <= maximum:
        raise BadRequest(f'{name} must be an integer in {minimum}..{maximum}')
    return int(raw)
