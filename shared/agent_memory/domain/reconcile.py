"""The one reconciler (CONTRACT §6.3–§6.5) for triples, extracted turns, instructions and uncertainties.

It reads the live rows at every address an ``Extraction`` touches, decides each outcome in memory,
and fills a ``WritePlan`` plus the extraction diff. The store applies the plan in one transaction
and re-checks every address it relied on; on a concurrent change the caller re-plans
(``run_with_retry``), so nothing is applied twice or half.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agent_memory.clock import in_range, new_id
from agent_memory.domain.entity_keys import Speaker, entity_key, entity_ref
from agent_memory.domain.importance import INITIAL_IMPORTANCE
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import overlaps, readers_also_read, visible
from agent_memory.extraction.model import (
    EntityRef,
    ExtractedAction,
    ExtractedAttribute,
    ExtractedInstruction,
    ExtractedRelation,
    ExtractedUncertainty,
    Extraction,
    Invalidation,
)
from agent_memory.plan_reads import OpenUncertainty
from agent_memory.rows.memory import AttributeRow, RelationRow
from agent_memory.rows.refs import EntityKey, entity_key_of, key_of, record_ref
from agent_memory.rows.scopes import ScopeSets
from agent_memory.vocabulary import (
    MemoryCategory,
    category_from_model,
    clean_display_name,
    names_self_entity,
    normalise_name,
)
from agent_memory.write_ops import (
    CloseAttribute,
    CloseRelation,
    CreateAction,
    CreateAttribute,
    CreateInstruction,
    CreateRelation,
    CreateUncertainty,
    DecisionTrace,
    FactFields,
    GuardAddress,
    GuardInstructions,
    MergeInstruction,
    Provenance,
    RefreshAttribute,
    RefreshRelation,
    ResolveUncertainty,
    SupersedeAttribute,
    UpsertEntity,
    WritePlan,
)

AUTHORITATIVE = frozenset({'upsert', 'document'})
# Keys that name a set, not a single value: a new value joins the others instead of superseding them
# ("I like jazz" after "I like hiking"). Explicit negation still ends one of them.
MULTI_VALUED_KEYS = frozenset({'likes', 'dislikes', 'preference', 'allergy', 'language', 'hobby', 'interest', 'skill', 'plays'})
# Attribute keys whose value also lives as a relation: negating the attribute ends the edge too.
RELATION_LABELS_FOR_KEY = {'employer': ('works_at', 'works_for'), 'location': ('lives_in', 'based_in'), 'city': ('lives_in',)}


@dataclass
class Source:
    kind: str  # 'upsert' for triples, 'turn' for extraction
    ref: str | None
    session_id: str | None
    principal: str
    turn_id: str | None = None
    acting_principal: str | None = None  # the manager who wrote on the principal's behalf (delegation audit)

    def provenance(self) -> Provenance:
        return Provenance(self.kind, self.ref, self.session_id, self.principal, self.acting_principal)


@dataclass
class Diff:
    turn_id: str | None
    entities: list[dict[str, Any]] = field(default_factory=list)
    attributes: list[dict[str, Any]] = field(default_factory=list)
    relations: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    instructions: list[dict[str, Any]] = field(default_factory=list)
    uncertainties: list[dict[str, Any]] = field(default_factory=list)
    corrections: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            'turnId': self.turn_id,
            'entities': self.entities,
            'attributes': self.attributes,
            'relations': self.relations,
            'actions': self.actions,
            'instructions': self.instructions,
            'uncertainties': self.uncertainties,
            'corrections': self.corrections,
        }


def without_forged_self_refs(extraction: Extraction) -> Extraction:
    """Drop every extracted item naming a self entity other than through first person (``self``): a model or a crafted
    turn spelling out ``self:<someone>`` must not write that principal's self facts (CONTRACT §6.2)."""

    def forged(item: object) -> bool:
        refs = [item] if isinstance(item, EntityRef) else [v for v in vars(item).values() if isinstance(v, EntityRef)]
        return any(not ref.is_self and names_self_entity(ref.name) for ref in refs)

    return Extraction(**{name: tuple(i for i in getattr(extraction, name) if not forged(i)) for name in Extraction.model_fields})


def can_supersede(old_kind: str, old_confidence: float, new_kind: str, new_confidence: float, floor: float) -> bool:
    """Same provenance class (or authoritative replacing experiential), confident enough, and not less sure."""
    same_class = (old_kind in AUTHORITATIVE) == (new_kind in AUTHORITATIVE)
    authoritative_over_experiential = new_kind in AUTHORITATIVE and old_kind not in AUTHORITATIVE
    return (same_class or authoritative_over_experiential) and new_confidence >= floor and new_confidence >= old_confidence


def takes_back(said: str, stored: str) -> bool:
    """Whether a value the speaker takes back is this stored one: the same words, or one holding all of the other's
    ("St. Mary's" takes back "St. Mary's Hospital", and a value once cut short at its abbreviation, "St")."""
    a, b = _words(said), _words(stored)
    return bool(a and b) and (a == b or set(a) <= set(b) or (len(b) < len(a) and b == a[: len(b)]))


def _words(text: str) -> list[str]:
    return [w.strip('.,;:!?\'"()') for w in fold(text).split() if w.strip('.,;:!?\'"()')]


def fold(text: str) -> str:
    """Instruction de-duplication compares label and description case- and space-insensitively."""
    return normalise_name(text)


@dataclass(frozen=True)
class Held:
    """A value held at an address while planning: a stored row, or one this write already plans to create."""

    ref: str  # attribute:<id>
    value: str
    scope_sets: ScopeSets
    memory_category: str
    confidence: float
    source_kind: str
    planned: CreateAttribute | None = None

    @classmethod
    def stored(cls, row: AttributeRow) -> Held:
        kind = (row.source.kind if row.source else None) or 'turn'
        return cls(row.ref, row.value, row.scope_sets, row.memory_category, row.confidence, kind)


@dataclass
class Address:
    """Planning state of one (entity, key): what is held there now, and the stored rows this write asserted."""

    held: list[Held] = field(default_factory=list)
    confirmed: set[str] = field(default_factory=set)  # refs: an invalidation in the same write must not close them


@dataclass(frozen=True)
class HeldEdge:
    ref: str  # relates_to:<id>
    scope_sets: ScopeSets
    planned: bool


def given_name(extraction: Extraction, floor: float) -> str | None:
    """The name a speaker gave for themself ("I'm Sam", "my name is …"): their self entity is shown by it (CONTRACT
    §6.2), never by the principal's id; a tentative or low-confidence one does not rename."""
    named = (a for a in extraction.attributes if a.entity.is_self and a.key == 'name' and not a.tentative and a.confidence >= floor)
    return next((clean_display_name(a.value) for a in named), None)


class Reconciler:
    def __init__(
        self,
        store: MemoryWrites,
        plan: WritePlan,
        diff: Diff,
        source: Source,
        scope_sets: ScopeSets,
        *,
        default_category: MemoryCategory,
        floor: float,
        known_at: dt.datetime,
        speaker: Speaker,
        reader: Sequence[str],
        category_override: MemoryCategory | None = None,
    ) -> None:
        self.store, self.plan, self.diff, self.source = store, plan, diff, source
        self.scope_sets, self.default_category, self.floor, self.known_at = scope_sets, default_category, floor, known_at
        self.speaker, self.category_override = speaker, category_override
        # The writer's memory:read patterns: what it is told (corrections, uncertainty reasons) never holds a value it
        # could not read (a write region may be wider than the read region: a write-only principal reads nothing).
        self.reader = list(reader)
        self.outcomes: list[dict[str, str]] = []  # what happened to each record, for the decision trace
        self._entities: set[EntityKey] = set()
        self._addresses: dict[tuple[EntityKey, str], Address] = {}
        self._edges: dict[tuple[EntityKey, str, EntityKey], list[HeldEdge]] = {}
        self._edges_from: dict[tuple[EntityKey, str], list[RelationRow]] = {}
        self._open: dict[tuple[EntityKey, str], list[OpenUncertainty]] = {}
        self._existing: set[EntityKey] = set()
        self._flagged_here: set[tuple[EntityKey, str]] = set()
        self._instructions: set[tuple[str, str]] = set()  # (label, description) keys this write creates
        self._given_name: str | None = None  # the name the speaker gave for themself in this turn ("I'm Sam")

    # ---- reading what the extraction touches ---------------------------------------------------------
    def key_of(self, ref_: EntityRef) -> EntityKey:
        return (self.speaker.key[0], self.speaker.key[1]) if ref_.is_self else entity_key(ref_.type, ref_.name)

    def run(self, extraction: Extraction) -> None:
        extraction = self._revised(extraction)
        self._load(extraction)
        self._given_name = given_name(extraction, self.floor)
        for item in extraction.entities:
            self._entity(item, self.default_category)
        for attribute in extraction.attributes:
            self._attribute(attribute)
        for relation in extraction.relations:
            self._relation(relation)
        for action in extraction.actions:
            self._action(action)
        for invalidation in extraction.invalidations:
            self._invalidate(invalidation)
        for uncertainty in extraction.uncertainties:
            self._uncertainty(uncertainty)
        for instruction in extraction.instructions:
            self._instruction(instruction)

    def _revised(self, extraction: Extraction) -> Extraction:
        """Each value the speaker takes back becomes, at every current address of its entity that holds it (in an
        overlapping scope), the new value as an attribute there (so it supersedes), or an invalidation of it."""
        if not extraction.revisions:
            return extraction
        entities = sorted({self.key_of(r.entity) for r in extraction.revisions})
        held = [h for h in self.store.live_attributes_of(entities, self.plan.now) if overlaps(h.scope_sets, self.scope_sets)]
        attributes, invalidations = list(extraction.attributes), list(extraction.invalidations)
        stated = {(self.key_of(a.entity), a.key) for a in attributes}
        for revision in extraction.revisions:
            entity = self.key_of(revision.entity)
            for row in held:
                if row.entity_key != entity or (revision.key and row.key != revision.key) or not takes_back(revision.old, row.value):
                    continue
                if revision.new and (entity, row.key) not in stated:
                    category = category_from_model(row.memory_category)
                    attributes.append(ExtractedAttribute(entity=revision.entity, key=row.key, value=revision.new, category=category))
                    stated.add((entity, row.key))
                elif not revision.new:
                    invalidations.append(Invalidation(entity=revision.entity, key=row.key, value=row.value))
        return extraction.model_copy(update={'attributes': tuple(attributes), 'invalidations': tuple(invalidations)})

    def _load(self, extraction: Extraction) -> None:
        refs = [
            *extraction.entities,
            *(a.entity for a in extraction.attributes),
            *(r.subject for r in extraction.relations),
            *(r.object for r in extraction.relations),
            *(a.actor for a in extraction.actions),
            *(a.object for a in extraction.actions if a.object),
            *(i.entity for i in extraction.invalidations),
        ]
        self._existing = self.store.existing_entities(sorted({self.key_of(r) for r in refs}))
        addresses = {(self.key_of(a.entity), a.key) for a in extraction.attributes}
        addresses |= {(self.key_of(i.entity), i.key) for i in extraction.invalidations}
        ordered = sorted(addresses)
        for row in self.store.live_attributes(ordered, self.plan.now):
            self._address(row.entity_key, row.key).held.append(Held.stored(row))
        for address in ordered:
            seen = tuple(key_of(h.ref) for h in self._address(*address).held)
            self.plan.add(GuardAddress(address[0], address[1], seen))
        for doubt in self.store.open_uncertainties_at(ordered):
            if doubt.entity_key is not None and doubt.key is not None:
                self._open.setdefault((doubt.entity_key, doubt.key), []).append(doubt)
        edges = {(self.key_of(r.subject), r.label, self.key_of(r.object)) for r in extraction.relations}
        for edge in self.store.live_relations(sorted(edges), self.plan.now):
            held = HeldEdge(edge.ref, edge.scope_sets, planned=False)
            self._edges.setdefault((entity_key_of(edge.subject), edge.label, entity_key_of(edge.object)), []).append(held)
        sources = {(self.key_of(i.entity), label) for i in extraction.invalidations for label in self._labels_for(i.key)}
        for edge in self.store.live_edges_from(sorted(sources), self.plan.now):
            self._edges_from.setdefault((entity_key_of(edge.subject), edge.label), []).append(edge)

    def _address(self, entity: EntityKey, key: str) -> Address:
        return self._addresses.setdefault((entity, key), Address())

    # ---- entities ------------------------------------------------------------------------------------
    def _entity(self, ref_: EntityRef, category: MemoryCategory) -> EntityKey:
        key = self.key_of(ref_)
        if key not in self._entities:
            self._entities.add(key)
            given = self._given_name if ref_.is_self else None
            name = given or (self.speaker.display_name if ref_.is_self else clean_display_name(ref_.name))
            entity_category: MemoryCategory = 'identity' if ref_.is_self else category
            self.plan.add(
                UpsertEntity(
                    key=key,
                    name=name,
                    memory_category=entity_category,
                    importance=INITIAL_IMPORTANCE[entity_category],
                    scope_sets=self.scope_sets,
                    self_principal=self.speaker.principal_id if ref_.is_self else None,
                    created_at=self.plan.now,
                    updated_at=self.plan.now,
                    rename=given is not None,
                )
            )
            self.diff.entities.append(
                {'id': entity_ref(key), 'name': name, 'entityType': key[0], 'memoryCategory': entity_category,
                 'isNew': key not in self._existing}
            )  # fmt: skip
        return key

    def _category(self, label: str | None) -> MemoryCategory:
        if self.category_override is not None:
            return self.category_override
        return self.default_category if label is None else category_from_model(label)

    # ---- attributes ----------------------------------------------------------------------------------
    def _attribute(self, item: ExtractedAttribute) -> None:
        category = self._category(item.category)
        entity = self._entity(item.entity, category)
        key, value, conf = item.key, item.value, item.confidence
        address = self._address(entity, key)
        same_scope = [h for h in address.held if overlaps(h.scope_sets, self.scope_sets)]
        same_value = next((h for h in same_scope if fold(h.value) == fold(value)), None)
        if same_value is not None:
            if same_value.planned is None:
                address.confirmed.add(same_value.ref)
                self.plan.add(RefreshAttribute(key_of(same_value.ref), conf))
            self._outcome(same_value.ref, 'updated')
            self._resolve_open(entity, key, conf, item.tentative)
            return
        attr_id = new_id()
        coexists = category == 'context' or key in MULTI_VALUED_KEYS
        conflicting = [] if coexists else [h for h in same_scope if h.memory_category != 'context']
        supersedes = None
        for old in conflicting:
            if can_supersede(old.source_kind, old.confidence, self.source.kind, conf, self.floor):
                supersedes = self._supersede(old, attr_id, entity, key, value)
            elif not item.tentative:  # a tentative value already comes with the turn's own uncertainty
                self._flag(old, entity, key, value)
        fields = self._fact_fields(category)
        if item.valid_from is not None and in_range(item.valid_from):  # a model's date outside the range is dropped
            fields = replace(fields, valid_from=item.valid_from)
        valid_until = item.valid_until if in_range(item.valid_until) else None
        created = CreateAttribute(attr_id, entity, key, value, conf, fields, valid_until=valid_until, supersedes=supersedes)
        self.plan.add(created)
        ref_ = record_ref('attribute', attr_id)
        address.held.append(Held(ref_, value, self.scope_sets, category, conf, self.source.kind, planned=created))
        self.diff.attributes.append({'id': ref_, 'entityId': entity_ref(entity), 'key': key, 'value': value, 'memoryCategory': category})
        self._outcome(ref_, 'created')
        self._resolve_open(entity, key, conf, item.tentative)

    def _supersede(self, old: Held, new_id_: str, entity: EntityKey, key: str, value: str) -> str:
        """End ``old`` in favour of the new row; returns the old row's id (what the new row supersedes)."""
        old_id = key_of(old.ref)
        if old.planned is not None:  # superseded within the same write: the earlier planned row is born closed
            self.plan.swap(old.planned, replace(old.planned, valid_until=self.plan.now, superseded_by=new_id_))
        else:
            self.plan.add(SupersedeAttribute(old_id, new_id_))
        self._address(entity, key).held.remove(old)
        old_value = old.value if self._readable(old) else None
        self.diff.corrections.append({'entityId': entity_ref(entity), 'key': key, 'oldValue': old_value, 'newValue': value})
        self._outcome(old.ref, 'superseded')
        return old_id

    def _readable(self, held: Held) -> bool:
        """The writer may be told this value: it plans it in this write, or its read grant covers the stored row."""
        return held.planned is not None or visible(held.scope_sets, self.reader)

    def _flag(self, old: Held, entity: EntityKey, key: str, value: str) -> None:
        # The reason is stored on the uncertainty (in this write's scope) and returned to the writer: it quotes the old
        # value only when the writer can read it.
        quotable = self._readable(old) and readers_also_read(self.scope_sets, old.scope_sets)
        old_value = f'"{old.value}"' if quotable else 'the current value'
        if old.source_kind in AUTHORITATIVE and self.source.kind not in AUTHORITATIVE:
            reason = f'curated value {old_value} contradicted by "{value}" from conversation'
            kind = 'cross_provenance'
        else:
            reason = f'"{value}" conflicts with {old_value} but is not confident enough to replace it'
            kind = 'confidence_floor'
        self._new_uncertainty(f'{entity_ref(entity)} {key}', reason, kind, entity, key)
        self._outcome(old.ref, 'flagged')

    def _resolve_open(self, entity: EntityKey, key: str, confidence: float, tentative: bool) -> None:
        """A confident value for an entity+key settles the open uncertainties about it (§6.5)."""
        if tentative or confidence < self.floor or (entity, key) in self._flagged_here:
            return
        for doubt in self._open.pop((entity, key), []):
            if overlaps(doubt.scope_sets, self.scope_sets):
                resolved_by = self.source.turn_id if self.source.kind == 'turn' else None
                self.plan.add(ResolveUncertainty(key_of(doubt.ref), resolved_by))
                self._outcome(doubt.ref, 'resolved')

    def _invalidate(self, item: Invalidation) -> None:
        entity = self.key_of(item.entity)
        address = self._address(entity, item.key)
        for held in list(address.held):
            wanted = item.value is None or fold(held.value) == fold(item.value)
            stored_unasserted = held.planned is None and held.ref not in address.confirmed
            if wanted and overlaps(held.scope_sets, self.scope_sets) and stored_unasserted:
                self.plan.add(CloseAttribute(key_of(held.ref)))
                address.held.remove(held)
                self._outcome(held.ref, 'closed')
        edges = [e for label in self._labels_for(item.key) for e in self._edges_from.get((entity, label), [])]
        for edge in edges:
            wanted = item.value is None or fold(entity_key_of(edge.object)[1]) == fold(item.value)
            if wanted and overlaps(edge.scope_sets, self.scope_sets):
                self.plan.add(CloseRelation(key_of(edge.ref)))
                self._outcome(edge.ref, 'closed')

    @staticmethod
    def _labels_for(key: str) -> tuple[str, ...]:
        return (key, *RELATION_LABELS_FOR_KEY.get(key, ()))

    # ---- relations and actions -----------------------------------------------------------------------
    def _relation(self, item: ExtractedRelation) -> None:
        category = self._category(item.category)
        subject, target = self._entity(item.subject, category), self._entity(item.object, category)
        edges = self._edges.setdefault((subject, item.label, target), [])
        same = next((e for e in edges if overlaps(e.scope_sets, self.scope_sets)), None)
        if same is not None:
            if not same.planned:
                self.plan.add(RefreshRelation(key_of(same.ref)))
            self._outcome(same.ref, 'updated')
            return
        rel_id = new_id()
        self.plan.add(CreateRelation(rel_id, subject, target, item.label, self._fact_fields(category)))
        edges.append(HeldEdge(record_ref('relates_to', rel_id), self.scope_sets, planned=True))
        self.diff.relations.append(
            {'subject': entity_ref(subject), 'label': item.label, 'object': entity_ref(target), 'memoryCategory': category}
        )
        self._outcome(record_ref('relates_to', rel_id), 'created')

    def _action(self, item: ExtractedAction) -> None:
        category = self._category(item.category) if item.category else 'context'
        actor = self._entity(item.actor, category)
        target = self._entity(item.object, category) if item.object else None
        action_id = new_id()
        fields = replace(self._fact_fields(category), confirmed_at=None)
        occurred_at = item.occurred_at if in_range(item.occurred_at) else None
        self.plan.add(CreateAction(action_id, actor, target, item.verb, item.object_text, item.summary, occurred_at, fields))
        self.diff.actions.append(
            {
                'actor': entity_ref(actor),
                'verb': item.verb,
                'object': entity_ref(target) if target else None,
                'objectText': item.object_text,
                'occurredAt': occurred_at.isoformat() if occurred_at else None,
                'summary': item.summary,
                'memoryCategory': category,
            }
        )
        self._outcome(record_ref('action', action_id), 'created')

    # ---- uncertainties and instructions --------------------------------------------------------------
    def _uncertainty(self, item: ExtractedUncertainty) -> None:
        entity = self._entity(item.entity, self.default_category) if item.entity is not None else None
        if entity is not None and item.key:
            self._flagged_here.add((entity, item.key))
        self._new_uncertainty(item.about, item.reason, item.kind, entity, item.key)

    def _new_uncertainty(self, about: str, reason: str, kind: str, entity: EntityKey | None, key: str | None) -> None:
        uncertainty_id = new_id()
        self.plan.add(
            CreateUncertainty(uncertainty_id, about, reason, kind, entity, key, self.source.turn_id, self.scope_sets, self.plan.now)
        )
        self.diff.uncertainties.append({'about': about, 'reason': reason})
        self._outcome(record_ref('uncertainty', uncertainty_id), 'created')

    def _instruction(self, item: ExtractedInstruction) -> None:
        """Never superseded; only a same label + description restatement in an overlapping scope merges (§6.4)."""
        label_key, description_key = fold(item.label), fold(item.description)
        if (label_key, description_key) in self._instructions:
            return  # said twice in one turn
        candidates = self.store.instructions_matching(label_key, description_key)
        self.plan.add(GuardInstructions(label_key, description_key, tuple(key_of(c.ref) for c in candidates)))
        match = next((c for c in candidates if overlaps(c.scope_sets, self.scope_sets)), None)
        if match is not None:
            self.plan.add(MergeInstruction(key_of(match.ref), self.source.turn_id))
            self.diff.instructions.append({'id': match.ref, 'label': match.label, 'description': match.description})
            self._outcome(match.ref, 'merged')
            return
        instruction_id = new_id()
        self._instructions.add((label_key, description_key))
        label, description = item.label.strip(), item.description.strip()
        self.plan.add(
            CreateInstruction(instruction_id, label, description, label_key, description_key, self.source.turn_id, self.scope_sets,
                              self.plan.now)
        )  # fmt: skip
        ref_ = record_ref('instruction', instruction_id)
        self.diff.instructions.append({'id': ref_, 'label': label, 'description': description})
        self._outcome(ref_, 'created')

    # ---- shared ----------------------------------------------------------------------------------------
    def _fact_fields(self, category: MemoryCategory) -> FactFields:
        return FactFields(
            memory_category=category,
            importance=INITIAL_IMPORTANCE[category],
            source=self.source.provenance(),
            source_turn=self.source.turn_id,
            valid_from=self.known_at,
            created_at=self.known_at,
            confirmed_at=self.plan.now,
            scope_sets=self.scope_sets,
        )

    def _outcome(self, record: str, outcome: str) -> None:
        self.outcomes.append({'record': record, 'outcome': outcome})

    def decision_trace(self, trace_id: str, input_: dict[str, Any], turn_id: str | None, latency_ms: float) -> DecisionTrace:
        """The trace of what this reconciliation decided (CONTRACT §8)."""
        return DecisionTrace(trace_id, input_, list(self.outcomes), self.source.principal, turn_id, latency_ms, self.plan.now,
                             scope_sets=self.scope_sets, acting_principal=self.source.acting_principal)  # fmt: skip


def triples_to_extraction(triples: list[Any]) -> Extraction:
    """Caller-supplied triples as an extraction: ``value`` → attribute, ``target`` → relation (confidence 1.0 unless given)."""
    attributes, relations = [], []
    for triple in triples:
        subject = EntityRef(type=triple.entity.type, name=triple.entity.name)
        confidence = 1.0 if triple.confidence is None else triple.confidence
        if triple.target is not None:
            target = EntityRef(type=triple.target.type, name=triple.target.name)
            relations.append(
                ExtractedRelation(subject=subject, label=triple.key, object=target, category=triple.memory_category, confidence=confidence)
            )
        else:
            attributes.append(
                ExtractedAttribute(
                    entity=subject, key=triple.key, value=triple.value_text, category=triple.memory_category, confidence=confidence
                )
            )
    return Extraction(attributes=tuple(attributes), relations=tuple(relations))
