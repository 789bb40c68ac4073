"""Closed vocabularies: entity types, memory categories, entity names and the self entity (CONTRACT §4, §6.2).

A leaf module: the domain, the extractors and their prompts all read the categories from here."""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

MemoryCategory = Literal['identity', 'knowledge', 'context']
CATEGORIES: tuple[MemoryCategory, ...] = ('identity', 'knowledge', 'context')


ENTITY_TYPES = (
    'person',
    'organisation',
    'project',
    'location',
    'topic',
    'product',
    'policy',
    'concept',
    'event',
    'agent',
    'service',
    'other',
)
_TYPE_SYNONYMS = {
    'company': 'organisation',
    'org': 'organisation',
    'organization': 'organisation',
    'business': 'organisation',
    'team': 'organisation',
    'people': 'person',
    'user': 'person',
    'human': 'person',
    'place': 'location',
    'city': 'location',
    'country': 'location',
    'subject': 'topic',
    'bot': 'agent',
    'assistant': 'agent',
}

_SPACES = re.compile(r'\s+')


def normalise_type(raw: str) -> str:
    """Fold a caller's or model's type label onto the closed vocabulary (unknown → ``other``)."""
    key = _SPACES.sub(' ', raw.strip().lower())
    if key in ENTITY_TYPES:
        return key
    if key.endswith('s') and key[:-1] in ENTITY_TYPES:
        return key[:-1]
    return _TYPE_SYNONYMS.get(key, 'other')


def normalise_name(raw: str) -> str:
    """Entity identity is exact on (type, normalised name): NFC, case-folded, single spaces."""
    return _SPACES.sub(' ', unicodedata.normalize('NFC', raw).strip()).casefold()


SELF = 'self'  # the name of the speaker's own self entity in an extraction (first person: I, me, my)
SELF_PREFIX = 'self:'  # a principal's self entity is person/"self:<principal id>" (domain.entity_keys.Speaker)


def names_self_entity(name: str) -> bool:
    """Self entities are reserved (CONTRACT §6.2): ``self`` (the first-person marker) and every ``self:<principal>``,
    whatever the casing, spacing or entity type, since first person binds to the speaker whatever the type says."""
    folded = normalise_name(name)
    return folded == SELF or folded.startswith(SELF_PREFIX)


def clean_display_name(raw: str) -> str:
    return _SPACES.sub(' ', unicodedata.normalize('NFC', raw).strip())


def category_from_model(label: str | None) -> MemoryCategory:
    """A model may invent labels; anything outside the closed set is ephemeral context."""
    key = (label or '').strip().lower()
    for category in CATEGORIES:
        if key == category:
            return category
    return 'context'
