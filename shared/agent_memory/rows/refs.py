"""The wire form of record ids: ``<table>:<key>``, entities as ``entity:<type>/<normalised name>``."""

from __future__ import annotations

from collections.abc import Sequence

EntityKey = tuple[str, str]  # (type, normalised name): an entity's identity


def entity_ref(key: EntityKey) -> str:
    return f'entity:{key[0]}/{key[1]}'


def entity_key_of(ref: str) -> EntityKey:
    """The (type, name) of ``entity:<type>/<name>``; an entity type never holds '/', a name may."""
    entity_type, _, name = ref.removeprefix('entity:').partition('/')
    return entity_type, name


def record_ref(table: str, key: str) -> str:
    return f'{table}:{key}'


def ref_from_key(table: str, key: str | Sequence[str]) -> str:
    """The wire ref of a record from its table and stored key (an entity's key is its (type, name))."""
    if table == 'entity' and not isinstance(key, str):
        return entity_ref((key[0], key[1]))
    return record_ref(table, str(key))


def record_key(ref: str) -> str | list[str]:
    """The stored key of the record a wire ref names (the inverse of ``ref_from_key``)."""
    table, _, key = ref.partition(':')
    return list(entity_key_of(ref)) if table == 'entity' else key


def key_of(ref: str) -> str:
    """The key part of ``<table>:<key>`` (a bare id is returned as is)."""
    return ref.partition(':')[2] or ref


def address_key(entity_key: Sequence[str], key: str) -> str:
    """The indexed address of (entity, key), injective: '%' and '#' in the name are escaped (migration 0013)."""
    name = entity_key[1].replace('%', '%25').replace('#', '%23')
    return f'{entity_key[0]}/{name}#{key}'


def ref_address(entity_ref: str, key: str) -> str:
    """``address_key`` from an entity ref (``type/name``; the type never holds '/')."""
    entity_type, _, name = entity_ref.partition('/')
    return address_key((entity_type, name), key)
