"""Request bodies as JSON the database can hold: bounded nesting, 64-bit integers, finite numbers.

Anything else is a 400 before a handler sees it: a 100k-deep document (``RecursionError`` in the parser),
metadata nested deeper than the engine accepts, ``10**30`` (beyond SurrealDB's 64-bit integers; an integer literal of
more than 20 characters is refused before Python converts it, which it refuses beyond 4,300 digits with a
``ValueError``), ``NaN``/``Infinity`` (which Python's parser accepts but JSON does not), a number such as ``1e309``
that is no finite double (Python reads it as ``inf``) or a lone surrogate such as ``"\\ud800"`` (valid JSON escape,
not encodable as UTF-8, so no database driver can send it).
"""

from __future__ import annotations

import json
import math
from typing import Any

from agent_memory.errors import BadRequest

MAX_JSON_DEPTH = 32
INT_MIN, INT_MAX = -(2**63), 2**63 - 1


def _refuse_constant(name: str) -> Any:
    raise BadRequest(f'malformed JSON: {name} is not a JSON number')


INT_TOO_LONG = 20  # characters: '-9223372036854775808' is the longest 64-bit integer


def _parse_int(literal: str) -> int:
    if len(literal) > INT_TOO_LONG:
        raise BadRequest('JSON integers must fit in 64 bits (-2^63 .. 2^63-1)')
    return int(literal)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise BadRequest(f'malformed JSON: {literal[:32]} is not a finite number')
    return value


def load_json(text: str) -> Any:
    """Parse ``text``; 400 when it is malformed, too deeply nested or holds a number the database cannot store."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int, parse_float=_parse_float)
    except json.JSONDecodeError as exc:
        raise BadRequest(f'malformed JSON: {exc.msg} at position {exc.pos}') from exc
    except RecursionError:
        raise BadRequest(f'JSON nested deeper than {MAX_JSON_DEPTH} levels') from None
    check_json_value(value)
    return value


def check_json_value(value: Any) -> None:
    """Walk ``value`` without recursion: nesting at most MAX_JSON_DEPTH containers, integers within 64 bits,
    strings (object keys included) encodable as UTF-8."""
    pending: list[tuple[Any, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth >= MAX_JSON_DEPTH:
                raise BadRequest(f'JSON nested deeper than {MAX_JSON_DEPTH} levels')
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
        elif isinstance(item, str):
            _check_text(item)
        elif isinstance(item, int) and not isinstance(item, bool) and not INT_MIN <= item <= INT_MAX:
            raise BadRequest('JSON integers must fit in 64 bits (-2^63 .. 2^63-1)')


def _check_text(text: str) -> None:
    try:
        text.encode('utf-8')
    except UnicodeEncodeError:
        raise BadRequest('JSON strings must be valid Unicode (no lone surrogates)') from None
