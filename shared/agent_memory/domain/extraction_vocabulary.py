"""The extraction vocabulary of one job: read once, then kept current with what the job's own turns write.

Reading the newest entities, attribute keys and relation labels fetches whole rows (each with its 384-float
embedding): it was the largest read of every extracted turn. A job's turns share a writer and so a read region, and
between two of them only the job itself writes what the next turn's vocabulary must show, so each committed plan is
merged into the sample the job read (``note``). The merge reproduces the engine's order (newest first, ties by record
key descending) and the same bounds, so every turn sees the vocabulary a fresh read would return, with one
exception kept on the safe side: an existing entity the sample does not hold makes the next turn read again.
Writes by other requests during a job show from the next job on.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import visible
from agent_memory.extraction.model import KnownEntity
from agent_memory.rows.memory import VocabularyRow
from agent_memory.write_ops import CreateAttribute, CreateRelation, UpsertEntity, WritePlan

VOCABULARY_LIMIT = 50
SAMPLE = VOCABULARY_LIMIT * 4  # attribute and relation rows read to find up to VOCABULARY_LIMIT distinct keys and labels


@dataclass(frozen=True)
class Vocabulary:
    """What the extractor is shown: entities, attribute keys and relation labels, most recently used first."""

    entities: tuple[KnownEntity, ...]
    keys: tuple[str, ...]
    labels: tuple[str, ...]


def _newest(rows: Iterable[VocabularyRow], bound: int) -> list[VocabularyRow]:
    return sorted(rows, key=lambda r: r.order, reverse=True)[:bound]


def _distinct(rows: Sequence[VocabularyRow]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(r.text for r in rows))[:VOCABULARY_LIMIT]


@dataclass
class JobVocabulary:
    """The vocabulary sample of one read region, read on first use and after anything the merge cannot reproduce."""

    store: MemoryWrites
    patterns: tuple[str, ...]
    _entities: list[VocabularyRow] = field(default_factory=list)
    _attributes: list[VocabularyRow] = field(default_factory=list)
    _relations: list[VocabularyRow] = field(default_factory=list)
    _stale: bool = True

    def current(self) -> Vocabulary:
        if self._stale:
            sample = self.store.turns().vocabulary(self.patterns, VOCABULARY_LIMIT, SAMPLE)
            self._entities, self._attributes, self._relations = list(sample.entities), list(sample.attributes), list(sample.relations)
            self._stale = False
        return Vocabulary(
            entities=tuple(KnownEntity(type=r.entity_type, name=r.text) for r in self._entities),
            keys=_distinct(self._attributes),
            labels=_distinct(self._relations),
        )

    def note(self, plan: WritePlan, new_entities: set[tuple[str, str]]) -> None:
        """Merge what a committed plan wrote: upserted entities move to the front (a new one enters if the region can
        read it), new attributes and relations enter at their known time if it can read them."""
        if self._stale:
            return
        held = {r.key: i for i, r in enumerate(self._entities)}
        for op in plan.of(UpsertEntity):
            key = tuple(op.key)
            if key in held:  # the stored name (unless renamed) and type stay; its scope only grows, so it stays readable
                old = self._entities[held[key]]
                name = op.name if op.rename else old.text
                self._entities[held[key]] = VocabularyRow(stamp=op.updated_at, key=key, text=name, entity_type=old.entity_type)
            elif op.key in new_entities:
                if visible(op.scope_sets, self.patterns):
                    self._entities.append(VocabularyRow(stamp=op.updated_at, key=key, text=op.name, entity_type=op.key[0]))
            else:  # an existing entity outside the sample: its stored name and scope are not known here
                self._stale = True
                return
        self._entities = _newest(self._entities, VOCABULARY_LIMIT)
        attributes = [
            VocabularyRow(stamp=op.fields.created_at, key=(op.id,), text=op.key)
            for op in plan.of(CreateAttribute)
            if visible(op.fields.scope_sets, self.patterns)
        ]
        relations = [
            VocabularyRow(stamp=op.fields.created_at, key=(op.id,), text=op.label)
            for op in plan.of(CreateRelation)
            if visible(op.fields.scope_sets, self.patterns)
        ]
        self._attributes = _newest([*self._attributes, *attributes], SAMPLE)
        self._relations = _newest([*self._relations, *relations], SAMPLE)

    def forget(self) -> None:
        """Something this job did not plan was written (another delivery finished a turn): read again."""
        self._stale = True
