"""A question states nothing (CONTRACT §7.1): which sentences of a message ask, and what is left that states.

The interrogative sentences of a /chat message are neither passages nor extracted; its statements are, like any
turn's. A sentence asks when it ends with "?", or opens like a question (or a request to tell) and does not end like
a statement ("When I was young I lived in Rome." states).
"""

from __future__ import annotations

import re

_SENTENCE = re.compile(r'[^.!?]+[.!?]*')
_OPENER = re.compile(r"[a-z0-9][a-z0-9'_-]*")
_QUESTION_OPENERS = frozenset({
    'what', 'whats', 'which', 'who', 'whom', 'whose', 'when', 'where', 'why', 'how', 'do', 'does', 'did', 'is',
    'are', 'am', 'was', 'were', 'can', 'could', 'would', 'will', 'should', 'shall', 'tell', 'remind', "what's",
    "who's", "where's", "when's", "how's",
})  # fmt: skip


def asks(sentence: str) -> bool:
    sentence = sentence.strip()
    opener = _OPENER.match(sentence.lower().replace('’', "'"))
    return sentence.endswith('?') or (opener is not None and opener.group(0) in _QUESTION_OPENERS and not sentence.endswith(('.', '!')))


def is_question(text: str) -> bool:
    """Every sentence of ``text`` asks something."""
    sentences = [s for s in _SENTENCE.findall(text) if s.strip()]
    return bool(sentences) and all(asks(s) for s in sentences)


def statements(text: str) -> str:
    """``text`` without its interrogative sentences, the rest as written ('' when it only asks)."""
    return ''.join(s for s in _SENTENCE.findall(text) if s.strip() and not asks(s)).strip()
