"""Named speakers (CONTRACT §6.1–6.2): a message's ``name`` says who is talking, and first person binds to that person.

Without a name, first person binds to the caller's self entity as before. A name is a person's display name: letters
and digits of any script (with combining marks), spaces and ``' - . _``; never the reserved alias ``self`` and never a
colon, so a speaker can never address a self entity (``self:<principal>``).
"""

from __future__ import annotations

import unicodedata

MAX_SPEAKER_CHARS, MAX_SPEAKER_WORDS = 128, 8
_PUNCTUATION = frozenset(" '-._")


def check_speaker_name(value: str | None) -> str | None:
    """The NFC-normalised name, or ValueError (a 400) saying what is wrong with it."""
    if value is None:
        return None
    name = unicodedata.normalize('NFC', value).strip()
    if not name or len(name) > MAX_SPEAKER_CHARS or len(name.split()) > MAX_SPEAKER_WORDS:
        raise ValueError(f'name must be 1-{MAX_SPEAKER_CHARS} characters and at most {MAX_SPEAKER_WORDS} words')
    if not all(c.isalnum() or c in _PUNCTUATION or unicodedata.category(c).startswith('M') for c in name):
        raise ValueError("name may hold letters, digits, spaces and ' - . _ only")
    if not any(c.isalnum() for c in name) or name.casefold() == 'self':
        raise ValueError('name must contain a letter or digit and must not be the reserved alias "self"')
    return name
