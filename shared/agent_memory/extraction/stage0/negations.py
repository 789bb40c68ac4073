"""Explicit negation ("I no longer work at X", "I'm not on the Pro plan anymore") → the (key, value) to invalidate."""

from __future__ import annotations

import re

from agent_memory.extraction.stage0.text import PROPER, clean_value
from agent_memory.extraction.stage0.titles import split_title

_NOT = r"(?:no\s+longer|don't|do\s+not|dont)"
_CANCELLED = (
    r"^(?:i|we)\s+(?:(?:just|have|'ve|finally)\s+)*(?:cancell?ed|canceled|ended|terminated)\s+"
    r'(?:my|our)\s+(?:\w+\s+)?(?:subscription|plan|membership)\b'
)
_NO_LONGER = re.compile(r'\b(?:anymore|any more|no longer)\b', re.IGNORECASE)


def find_invalidations(text: str) -> list[tuple[str, str | None]]:
    """``(key, value)`` pairs the clause says are no longer true (value None: every value of the key)."""
    for reader in (_not_working, _not_living, _not_being, _left, _cancelled, _not_liking):
        if found := reader(text):
            return found
    return []


def _match(pattern: str, text: str) -> re.Match[str] | None:
    return re.match(pattern, text, re.IGNORECASE)


def _not_working(text: str) -> list[tuple[str, str | None]]:
    m = _match(rf'^(?:i|we)\s+{_NOT}\s+(?:currently\s+)?work\s+(?:at|for)\s+(?P<v>{PROPER})', text)
    return [('employer', m.group('v'))] if m else []


def _not_living(text: str) -> list[tuple[str, str | None]]:
    m = _match(rf'^(?:i|we)\s+{_NOT}\s+live\s+in\s+(?P<v>{PROPER})', text)
    return [('location', m.group('v'))] if m else []


def _not_being(text: str) -> list[tuple[str, str | None]]:
    m = _match(r"^(?:i'm|i\s+am|we're|we\s+are)\s+(?:not|no\s+longer)\s+(?P<rest>.+)$", text)
    if not m:
        return []
    rest = m.group('rest')
    if plan := _match(r'^(?:on|subscribed\s+to|using)\s+(?:the\s+)?(?P<v>[\w-]+)\s+(?:plan|tier|subscription)\b', rest):
        return [('plan', plan.group('v'))]
    if org := _match(rf'^(?:working\s+)?(?:at|with|for)\s+(?P<v>{PROPER})', rest):
        return [('employer', org.group('v'))]
    if place := _match(rf'^(?:based|living|located)\s+in\s+(?P<v>{PROPER})', rest):
        return [('location', place.group('v'))]
    title = split_title(clean_value(rest))
    return [('occupation', title[0])] if title else []


def _left(text: str) -> list[tuple[str, str | None]]:
    m = _match(rf'^(?:i|we)\s+(?:(?:just|recently|finally|have|\'ve)\s+)*(?:left|quit)\s+(?P<v>{PROPER})', text)
    return [('employer', m.group('v'))] if m else []


def _cancelled(text: str) -> list[tuple[str, str | None]]:
    return [('plan', None)] if _match(_CANCELLED, text) else []


def _not_liking(text: str) -> list[tuple[str, str | None]]:
    m = _match(rf'^(?:i|we)\s+{_NOT}\s+(?:really\s+)?(?:like|love|enjoy)\s+(?P<v>.+)$', text)
    if not m or not _NO_LONGER.search(text):
        return []
    value = clean_value(m.group('v'))
    return [('likes', value)] if value else []
