"""How entities are named and addressed: the key ``(type, normalised name)``, its record reference, and a principal's
self entity. A leaf of the domain: the read routes address entities without importing the write planner."""

from __future__ import annotations

from dataclasses import dataclass

from agent_memory.rows.refs import EntityKey
from agent_memory.vocabulary import SELF_PREFIX, normalise_name, normalise_type


@dataclass(frozen=True)
class Speaker:
    """Whose self entity first person binds to (one per principal)."""

    principal_id: str
    display_name: str

    @property
    def key(self) -> list[str]:
        return ['person', normalise_name(f'{SELF_PREFIX}{self.principal_id}')]


def self_entity_ref(principal_id: str) -> str:
    """The ``type/name`` reference of a principal's self entity (as retrieval hits carry it)."""
    return '/'.join(Speaker(principal_id, '').key)


def entity_key(entity_type: str, name: str) -> EntityKey:
    return normalise_type(entity_type), normalise_name(name)


def entity_ref(key: EntityKey) -> str:
    return f'entity:{key[0]}/{key[1]}'
