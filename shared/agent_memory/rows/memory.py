"""What memory holds: entities and the facts about them (attributes, relations, actions)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agent_memory.rows.refs import EntityKey, entity_key_of
from agent_memory.rows.scopes import ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class Source:
    """Where a fact came from: ``upsert`` (authoritative), ``extraction``, ``chat`` … and the turn or session behind it."""

    kind: str | None = None
    ref: str | None = None
    session_id: str | None = None  # the id callers use for the session
    principal: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EntityRow:
    ref: str  # entity:<type>/<normalised name>
    name: str  # the display name, in the caller's casing
    type: str
    memory_category: str
    importance: float
    scope_sets: ScopeSets
    created_at: dt.datetime
    updated_at: dt.datetime
    self_principal: str | None = None

    @property
    def key(self) -> EntityKey:
        return entity_key_of(self.ref)


@dataclass(frozen=True, slots=True, kw_only=True)
class AttributeRow:
    ref: str  # attribute:<id>
    entity: str  # entity ref
    key: str
    value: str
    memory_category: str
    importance: float
    confidence: float
    scope_sets: ScopeSets
    created_at: dt.datetime
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    confirmed_at: dt.datetime | None = None
    supersedes: str | None = None  # attribute ref
    superseded_by: str | None = None  # attribute ref
    source: Source | None = None
    source_turn: str | None = None  # bare turn id
    tentative: bool = False  # an open uncertainty came from the same turn (only where the read asks for it)

    @property
    def entity_key(self) -> EntityKey:
        return entity_key_of(self.entity)


@dataclass(frozen=True, slots=True, kw_only=True)
class RelationRow:
    ref: str  # relates_to:<id>
    subject: str  # entity ref (the edge's ``in``)
    label: str
    object: str  # entity ref (the edge's ``out``)
    memory_category: str
    importance: float
    scope_sets: ScopeSets
    created_at: dt.datetime
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    source: Source | None = None
    source_turn: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ActionRow:
    ref: str  # action:<id>
    actor: str  # entity ref
    verb: str
    summary: str
    memory_category: str
    importance: float
    scope_sets: ScopeSets
    created_at: dt.datetime
    object: str | None = None  # entity ref
    object_text: str | None = None
    occurred_at: dt.datetime | None = None
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    source: Source | None = None
    source_turn: str | None = None


FactRow = AttributeRow | RelationRow | ActionRow


@dataclass(frozen=True, slots=True, kw_only=True)
class VocabularyRow:
    """One row of the extraction vocabulary's sample: an entity (``key`` its (type, normalised name), ``text`` its display
    name), an attribute (``text`` its key) or a relation (``text`` its label). The engine lists them newest ``stamp``
    first, ties by record key descending, which ``order`` reproduces."""

    stamp: dt.datetime
    key: tuple[str, ...]  # the record's key: (type, normalised name) for an entity, (id,) otherwise
    text: str
    entity_type: str = ''

    @property
    def order(self) -> tuple[dt.datetime, tuple[str, ...]]:
        return (self.stamp, self.key)


@dataclass(frozen=True, slots=True, kw_only=True)
class VocabularySample:
    """The newest entities, attributes and relations a reader may see, as the engine orders them (bounded)."""

    entities: tuple[VocabularyRow, ...]
    attributes: tuple[VocabularyRow, ...]
    relations: tuple[VocabularyRow, ...]
