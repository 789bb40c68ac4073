"""What an extractor returns for one turn, before reconciliation (CONTRACT §6.2).

Extractors are pure: they read the turn and an ``ExtractionContext`` and return an ``Extraction``.
They never write; the reconciler decides what the extraction changes in memory.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.vocabulary import SELF


class _Model(BaseModel):
    model_config = ConfigDict(extra='forbid', frozen=True)


class EntityRef(_Model):
    """An entity by (type, name). ``EntityRef.me()`` is the caller's self entity."""

    type: str = Field(min_length=1, max_length=64)
    name: str = Field(min_length=1, max_length=256)

    @classmethod
    def me(cls) -> EntityRef:
        return cls(type='person', name=SELF)

    @property
    def is_self(self) -> bool:
        return self.name == SELF


class ExtractedAttribute(_Model):
    entity: EntityRef
    key: str = Field(min_length=1, max_length=128)
    value: str = Field(min_length=1, max_length=4096)
    category: str | None = None  # identity | knowledge | context; anything else from a model → context
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)
    valid_from: dt.datetime | None = None
    valid_until: dt.datetime | None = None
    tentative: bool = False  # written alongside an uncertainty from the same turn


class ExtractedRelation(_Model):
    subject: EntityRef
    label: str = Field(min_length=1, max_length=128)
    object: EntityRef
    category: str | None = None
    confidence: float = Field(default=0.9, ge=0.0, le=1.0)


class ExtractedAction(_Model):
    actor: EntityRef
    verb: str = Field(min_length=1, max_length=128)
    object: EntityRef | None = None
    object_text: str | None = None
    summary: str = Field(min_length=1, max_length=1024)
    occurred_at: dt.datetime | None = None
    category: str | None = None


class ExtractedInstruction(_Model):
    label: str = Field(min_length=1, max_length=128)
    description: str = Field(min_length=1, max_length=1024)


UncertaintyKind = Literal['self_correction', 'ambiguous_reference', 'contradiction', 'unresolved_time', 'sarcasm', 'hedge', 'other']


class ExtractedUncertainty(_Model):
    about: str = Field(min_length=1, max_length=512)
    reason: str = Field(min_length=1, max_length=1024)
    kind: UncertaintyKind = 'other'
    entity: EntityRef | None = None
    key: str | None = None


class Invalidation(_Model):
    """Explicit negation ("I no longer work at X"): close the matching current attributes/relations."""

    entity: EntityRef
    key: str
    value: str | None = None  # None closes every current value of the key


class Revision(_Model):
    """A value the speaker takes back, whatever key it was stored under ("it's not Dubois Hardware, it's Duquette
    Hardware", "Mimi is 6, not 5", "Joris is not self-employed anymore"): the entity's current attributes holding ``old``
    (under ``key`` when it is known) get ``new`` instead, or are closed when there is none."""

    entity: EntityRef
    old: str = Field(min_length=1, max_length=512)
    new: str | None = Field(default=None, max_length=4096)
    key: str | None = None


class Extraction(_Model):
    entities: tuple[EntityRef, ...] = ()
    attributes: tuple[ExtractedAttribute, ...] = ()
    relations: tuple[ExtractedRelation, ...] = ()
    actions: tuple[ExtractedAction, ...] = ()
    instructions: tuple[ExtractedInstruction, ...] = ()
    uncertainties: tuple[ExtractedUncertainty, ...] = ()
    invalidations: tuple[Invalidation, ...] = ()
    revisions: tuple[Revision, ...] = ()

    def merged(self, other: Extraction) -> Extraction:
        """Stage 0 plus a later stage: the union, without exact duplicates, first-seen order kept."""

        def union(a: tuple[BaseModel, ...], b: tuple[BaseModel, ...]) -> tuple[BaseModel, ...]:
            return tuple(dict.fromkeys([*a, *b]))

        return Extraction(**{name: union(getattr(self, name), getattr(other, name)) for name in type(self).model_fields})

    def not_covered_by(self, later: Extraction) -> Extraction:
        """What of this (stage 0) result a later stage leaves unsaid: the instructions and uncertainties, and the
        attributes, relations and negations at addresses (entity + key, subject + label) the later result does not
        fill. A model can correct a stage-0 value by giving the same address another one, but cannot lose it."""
        keys = {(a.entity, a.key) for a in later.attributes} | {(i.entity, i.key) for i in later.invalidations}
        labels = {(r.subject, r.label) for r in later.relations}
        attributes = tuple(a for a in self.attributes if (a.entity, a.key) not in keys)
        relations = tuple(r for r in self.relations if (r.subject, r.label) not in labels)
        referenced = {a.entity for a in attributes} | {r.subject for r in relations} | {r.object for r in relations}
        return Extraction(
            entities=tuple(e for e in self.entities if e in referenced),
            attributes=attributes,
            relations=relations,
            instructions=self.instructions,
            uncertainties=self.uncertainties,
            invalidations=tuple(i for i in self.invalidations if (i.entity, i.key) not in keys),
            revisions=self.revisions,
        )


class KnownEntity(_Model):
    type: str
    name: str


class PriorTurn(_Model):
    role: str
    content: str
    observed_at: dt.datetime
    speaker: str | None = None  # the message's named speaker, if it had one


class ExtractionContext(_Model):
    """Everything an extractor may read besides the turn itself (bounded by the caller)."""

    role: Literal['user', 'assistant', 'system', 'tool'] = 'user'
    observed_at: dt.datetime
    speaker_name: str | None = None  # the principal's display name (first person binds to its self entity)
    speaker: str | None = None  # the message's named speaker: first person binds to person/<speaker> instead
    known_entities: tuple[KnownEntity, ...] = ()  # vocabulary: existing entities visible in the turn's scope, most used first
    attribute_keys: tuple[str, ...] = ()  # vocabulary: attribute keys in use, most used first
    relation_labels: tuple[str, ...] = ()
    recent_turns: tuple[PriorTurn, ...] = ()  # the session's previous turns, oldest first (bounded window)
    open_uncertainties: tuple[ExtractedUncertainty, ...] = ()  # open ones in scope, so a clarification can settle them
