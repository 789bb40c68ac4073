"""Numbers on the wire are rounded to what they mean (REST bodies, SSE frames and MCP tool results alike): an importance
or a score to 4 decimals, a duration in milliseconds to 1. Stored values keep their precision."""

from __future__ import annotations

from typing import Any

_FOUR_DECIMALS = frozenset({'importance', 'score', 'scores', 'topScores', 'similarity', 'cacheHitRate'})
_MAX_DEPTH = 64  # our own bodies are shallow; a caller's free-form metadata deeper than this is left as it is


def _places(key: str) -> int | None:
    if key in _FOUR_DECIMALS:
        return 4
    if key.endswith('Ms') or key == 'ms':
        return 1
    return None


def _rounded(value: Any, places: int | None, depth: int) -> Any:
    if isinstance(value, float):
        return round(value, places) if places is not None else value
    if depth >= _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        return {k: _rounded(v, _places(k) if isinstance(k, str) else None, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v, places, depth + 1) for v in value]
    return value


def rounded(body: Any) -> Any:
    """``body`` with every float under a known key rounded (a list under such a key: each element)."""
    return _rounded(body, None, 0)
