"""Conversions between SurrealDB values and the service's wire identifiers."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from agent_memory.db.sdk import RecordID


def content_of(op: Any) -> dict[str, Any]:
    """A write op's fields as statement content, without ``dataclasses.asdict``'s deep copy: the values are only encoded,
    and deep-copying a 384-float embedding costs more than encoding it."""
    return {f.name: getattr(op, f.name) for f in fields(op)}


def rid(table: str, key: Any) -> RecordID:
    return RecordID(table, key)


def entity_rid(entity_type: str, normalised_name: str) -> RecordID:
    return RecordID('entity', [entity_type, normalised_name])


def record_id(wire_ref: str) -> RecordID:
    """The record a wire ref names: ``entity:<type>/<name>`` or ``<table>:<key>`` (the inverse of ``ref``)."""
    table, _, key = wire_ref.partition(':')
    if table == 'entity':
        entity_type, _, name = key.partition('/')
        return entity_rid(entity_type, name)
    return RecordID(table, key)


def ref(value: Any) -> str | None:
    """Render a record id the way clients see it: ``entity:person/alice``, ``attribute:<id>``, bare ids otherwise."""
    if value is None:
        return None
    if not isinstance(value, RecordID):
        return str(value)
    key: Any = value.id
    if value.table_name == 'entity' and isinstance(key, list):
        return f'entity:{key[0]}/{key[1]}'
    return f'{value.table_name}:{key!s}'


def bare(value: Any) -> str | None:
    """The key part only (sessions and turns are addressed by their bare id on the wire)."""
    if value is None:
        return None
    return str(value.id) if isinstance(value, RecordID) else str(value)


def session_id_of(value: Any) -> str | None:
    """The id callers use for a session (a record or its stored key ``<principal>/<id>``; legacy keys are the id)."""
    key = bare(value)
    return key.rsplit('/', 1)[-1] if key else None


class Tx:
    """Builds one multi-statement SurrealQL transaction with uniquely named parameters."""

    def __init__(self) -> None:
        self.statements: list[str] = []
        self.params: dict[str, Any] = {}

    def p(self, value: Any) -> str:
        name = f'p{len(self.params)}'
        self.params[name] = value
        return f'${name}'

    def add(self, statement: str) -> None:
        self.statements.append(statement.strip().rstrip(';') + ';')

    def sql(self, quiet: bool = False) -> str:
        """The transaction; ``quiet`` makes every write return nothing (a plan of 500 rows would otherwise send every
        created row, embeddings included, back through the CBOR decoder only to be dropped)."""
        statements = [_quiet(s) for s in self.statements] if quiet else self.statements
        body = '\n'.join(statements)
        return f'BEGIN TRANSACTION;\n{body}\nCOMMIT TRANSACTION;'


_WRITES = ('CREATE ', 'UPDATE ', 'UPSERT ', 'RELATE ', 'DELETE ')


def _quiet(statement: str) -> str:
    if not statement.startswith(_WRITES) or ' RETURN ' in statement:
        return statement
    return statement.removesuffix(';') + ' RETURN NONE;'
