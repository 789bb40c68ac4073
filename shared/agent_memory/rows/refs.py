"""The wire form of record ids: ``<table>:<key>``, entities as ``entity:<type>/<normalised name>``."""

from __future__ import annotations

EntityKey = tuple[str, str]  # (type, normalised name): an entity's identity


def entity_ref(key: EntityKey) -> str:
    return f'entity:{key[0]}/{key[1]}'


def entity_key_of(ref: str) -> EntityKey:
    """The (type, name) of ``entity:<type>/<name>``; an entity type never holds '/', a name may."""
    entity_type, _, name = ref.removeprefix('entity:').partition('/')
    return entity_type, name


def record_ref(table: str, key: str) -> str:
    return f'{table}:{key}'


def key_of(ref: str) -> str:
    """The key part of ``<table>:<key>`` (a bare id is returned as is)."""
    return ref.partition(':')[2] or ref
