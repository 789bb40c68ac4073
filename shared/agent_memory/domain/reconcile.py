"""The one reconciler (CONTRACT §6.3–§6.5) for triples, extracted turns, instructions and uncertainties.

It reads the live rows at every address an ``Extraction`` touches, decides each outcome in memory,
and fills a ``WritePlan`` plus the extraction diff. The store applies the plan in one transaction
and re-checks every address it relied on; on a concurrent change the caller re-plans
(``run_with_retry``), so nothing is applied twice or half.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from agent_memory.clock import new_id
from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import bare, ref, rid
from agent_memory.domain.importance import INITIAL_IMPORTANCE
from agent_memory.domain.scopes import ScopeSets, overlaps
from agent_memory.domain.write_plan import AddressGuard, InstructionGuard, WritePlan
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
from agent_memory.vocabulary import (
    SELF_PREFIX,
    MemoryCategory,
    category_from_model,
    clean_display_name,
    names_self_entity,
    normalise_name,
    normalise_type,
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

    @property
    def turn(self) -> Any:
        return rid('turn', self.turn_id) if self.turn_id else None

    def as_row(self) -> dict[str, Any]:
        return {'kind': self.kind, 'ref': self.ref, 'session_id': self.session_id, 'principal': self.principal}


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


@dataclass(frozen=True)
class Speaker:
    """Whose self entity first person binds to (one per principal)."""

    principal_id: str
    display_name: str

    @property
    def key(self) -> list[str]:
        return ['person', normalise_name(f'{SELF_PREFIX}{self.principal_id}')]


def without_forged_self_refs(extraction: Extraction) -> Extraction:
    """Drop every extracted item naming a self entity other than through first person (``self``): a model or a crafted
    turn spelling out ``self:<someone>`` must not write that principal's self facts (CONTRACT §6.2)."""

    def forged(item: object) -> bool:
        refs = [item] if isinstance(item, EntityRef) else [v for v in vars(item).values() if isinstance(v, EntityRef)]
        return any(not ref.is_self and names_self_entity(ref.name) for ref in refs)

    return Extraction(**{name: tuple(i for i in getattr(extraction, name) if not forged(i)) for name in Extraction.model_fields})


def self_entity_ref(principal_id: str) -> str:
    """The ``type/name`` reference of a principal's self entity (as retrieval hits carry it)."""
    return '/'.join(Speaker(principal_id, '').key)


def can_supersede(existing: dict[str, Any], new_kind: str, new_confidence: float, floor: float) -> bool:
    """Same provenance class (or authoritative replacing experiential), confident enough, and not less sure."""
    old_kind = (existing.get('source') or {}).get('kind', 'turn')
    same_class = (old_kind in AUTHORITATIVE) == (new_kind in AUTHORITATIVE)
    authoritative_over_experiential = new_kind in AUTHORITATIVE and old_kind not in AUTHORITATIVE
    return (same_class or authoritative_over_experiential) and new_confidence >= floor and new_confidence >= float(existing['confidence'])


def entity_key(entity_type: str, name: str) -> list[str]:
    return [normalise_type(entity_type), normalise_name(name)]


def entity_ref(key: list[str]) -> str:
    return f'entity:{key[0]}/{key[1]}'


def fold(text: str) -> str:
    """Instruction de-duplication compares label and description case- and space-insensitively."""
    return normalise_name(text)


class Reconciler:
    def __init__(
        self,
        store: MemoryStore,
        plan: WritePlan,
        diff: Diff,
        source: Source,
        scope_sets: ScopeSets,
        *,
        default_category: MemoryCategory,
        floor: float,
        known_at: dt.datetime,
        speaker: Speaker,
        category_override: MemoryCategory | None = None,
    ) -> None:
        self.store, self.plan, self.diff, self.source = store, plan, diff, source
        self.scope_sets, self.default_category, self.floor, self.known_at = scope_sets, default_category, floor, known_at
        self.speaker, self.category_override = speaker, category_override
        self._entities: dict[tuple[str, str], dict[str, Any]] = {}
        self._live: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._edges: dict[tuple[str, str, str, str, str], list[dict[str, Any]]] = {}
        self._edges_from: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._open: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._existing: set[tuple[str, str]] = set()
        self._flagged_here: set[tuple[str, str, str]] = set()

    # ---- reading what the extraction touches ---------------------------------------------------------
    def key_of(self, ref_: EntityRef) -> list[str]:
        return list(self.speaker.key) if ref_.is_self else entity_key(ref_.type, ref_.name)

    def run(self, extraction: Extraction) -> None:
        self._load(extraction)
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
        keys = {tuple(self.key_of(r)) for r in refs}
        self._existing = self.store.existing_entities([list(k) for k in sorted(keys)])
        addresses = {(tuple(self.key_of(a.entity)), a.key) for a in extraction.attributes}
        addresses |= {(tuple(self.key_of(i.entity)), i.key) for i in extraction.invalidations}
        ordered = sorted(addresses)
        for row in self.store.live_attributes([(list(e), k) for e, k in ordered], self.plan.now):
            self._live.setdefault((row['entity'].id[0], row['entity'].id[1], row['key']), []).append(row)
        for entity, key in ordered:
            seen = [bare(r['id']) or '' for r in self._live.get((entity[0], entity[1], key), [])]
            self.plan.guards.append(AddressGuard(list(entity), key, seen))
        for row in self.store.open_uncertainties_at([(list(e), k) for e, k in ordered]):
            self._open.setdefault((row['entity'].id[0], row['entity'].id[1], row['key']), []).append(row)
        edges = {(tuple(self.key_of(r.subject)), r.label, tuple(self.key_of(r.object))) for r in extraction.relations}
        for row in self.store.live_relations([(list(s), label, list(d)) for s, label, d in sorted(edges)], self.plan.now):
            self._edges.setdefault((*row['in'].id, row['label'], *row['out'].id), []).append(row)
        sources = {(tuple(self.key_of(i.entity)), label) for i in extraction.invalidations for label in self._labels_for(i.key)}
        for row in self.store.live_edges_from([(list(e), label) for e, label in sorted(sources)], self.plan.now):
            self._edges_from.setdefault((*row['in'].id, row['label']), []).append(row)

    # ---- entities ------------------------------------------------------------------------------------
    def _entity(self, ref_: EntityRef, category: MemoryCategory) -> list[str]:
        key = self.key_of(ref_)
        if (key[0], key[1]) not in self._entities:
            is_new = (key[0], key[1]) not in self._existing
            name = self.speaker.display_name if ref_.is_self else clean_display_name(ref_.name)
            row = {
                'key': key,
                'name': name,
                'type': key[0],
                'memory_category': 'identity' if ref_.is_self else category,
                'importance': INITIAL_IMPORTANCE['identity' if ref_.is_self else category],
                'scope_sets': self.scope_sets,
                'self_principal': self.speaker.principal_id if ref_.is_self else None,
                'created_at': self.plan.now,
                'updated_at': self.plan.now,
            }
            self._entities[(key[0], key[1])] = row
            self.plan.entities.append(row)
            self.diff.entities.append(
                {'id': entity_ref(key), 'name': name, 'entityType': key[0], 'memoryCategory': row['memory_category'], 'isNew': is_new}
            )
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
        live = self._live.setdefault((entity[0], entity[1], key), [])
        same_scope = [r for r in live if overlaps(r['scope_sets'], self.scope_sets)]
        same_value = next((r for r in same_scope if fold(r['value']) == fold(value)), None)
        if same_value is not None:
            same_value['_confirmed'] = True  # asserted by this write: an invalidation in it must not close it
            if not same_value.get('_planned'):
                self.plan.refreshed_attributes.append((bare(same_value['id']) or '', conf))
            self._outcome(ref(same_value['id']) or '', 'updated')
            self._resolve_open(entity, key, conf, item.tentative)
            return
        attr_id = new_id()
        row: dict[str, Any] = {
            'id': attr_id,
            'entity_key': entity,
            'key': key,
            'value': value,
            'confidence': conf,
            **self._fact_fields(category),
        }
        if item.valid_from is not None:
            row['valid_from'] = item.valid_from
        if item.valid_until is not None:
            row['valid_until'] = item.valid_until
        coexists = category == 'context' or key in MULTI_VALUED_KEYS
        conflicting = [] if coexists else [r for r in same_scope if r.get('memory_category') != 'context']
        for old in conflicting:
            if can_supersede(old, self.source.kind, conf, self.floor):
                self._supersede(old, row, entity, key, value)
            elif not item.tentative:  # a tentative value already comes with the turn's own uncertainty
                self._flag(old, entity, key, value)
        self.plan.new_attributes.append(row)
        live.append({**row, 'id': f'attribute:{attr_id}', '_planned': True})
        self.diff.attributes.append(
            {'id': f'attribute:{attr_id}', 'entityId': entity_ref(entity), 'key': key, 'value': value, 'memoryCategory': category}
        )
        self._outcome(f'attribute:{attr_id}', 'created')
        self._resolve_open(entity, key, conf, item.tentative)

    def _supersede(self, old: dict[str, Any], row: dict[str, Any], entity: list[str], key: str, value: str) -> None:
        old_id = str(old['id']).split(':', 1)[1] if old.get('_planned') else bare(old['id']) or ''
        if old.get('_planned'):
            # superseded within the same write: the earlier planned row is born closed
            planned = next(a for a in self.plan.new_attributes if a['id'] == old_id)
            planned['valid_until'] = self.plan.now
            planned['superseded_by'] = rid('attribute', row['id'])
        else:
            self.plan.superseded.append((old_id, row['id']))
        row['supersedes'] = rid('attribute', old_id)
        self._live[(entity[0], entity[1], key)].remove(old)
        self.diff.corrections.append({'entityId': entity_ref(entity), 'key': key, 'oldValue': old['value'], 'newValue': value})
        self._outcome(f'attribute:{old_id}', 'superseded')

    def _flag(self, old: dict[str, Any], entity: list[str], key: str, value: str) -> None:
        old_kind = (old.get('source') or {}).get('kind', 'turn')
        if old_kind in AUTHORITATIVE and self.source.kind not in AUTHORITATIVE:
            reason = f'curated value "{old["value"]}" contradicted by "{value}" from conversation'
            kind = 'cross_provenance'
        else:
            reason = f'"{value}" conflicts with "{old["value"]}" but is not confident enough to replace it'
            kind = 'confidence_floor'
        self._new_uncertainty(f'{entity_ref(entity)} {key}', reason, kind, entity, key)
        self._outcome(ref(old['id']) or '', 'flagged')

    def _resolve_open(self, entity: list[str], key: str, confidence: float, tentative: bool) -> None:
        """A confident value for an entity+key settles the open uncertainties about it (§6.5)."""
        if tentative or confidence < self.floor or (entity[0], entity[1], key) in self._flagged_here:
            return
        for row in self._open.pop((entity[0], entity[1], key), []):
            if overlaps(row['scope_sets'], self.scope_sets):
                self.plan.resolved_uncertainties.append(bare(row['id']) or '')
                self._outcome(ref(row['id']) or '', 'resolved')

    def _invalidate(self, item: Invalidation) -> None:
        entity = self.key_of(item.entity)
        for row in list(self._live.get((entity[0], entity[1], item.key), [])):
            wanted = item.value is None or fold(row['value']) == fold(item.value)
            if wanted and overlaps(row['scope_sets'], self.scope_sets) and not row.get('_planned') and not row.get('_confirmed'):
                self.plan.closed_attributes.append(bare(row['id']) or '')
                self._live[(entity[0], entity[1], item.key)].remove(row)
                self._outcome(ref(row['id']) or '', 'closed')
        edges = [e for label in self._labels_for(item.key) for e in self._edges_from.get((entity[0], entity[1], label), [])]
        for edge in edges:
            wanted = item.value is None or fold(edge['out'].id[1]) == fold(item.value)
            if wanted and overlaps(edge['scope_sets'], self.scope_sets):
                self.plan.closed_relations.append(bare(edge['id']) or '')
                self._outcome(ref(edge['id']) or '', 'closed')

    @staticmethod
    def _labels_for(key: str) -> tuple[str, ...]:
        return (key, *RELATION_LABELS_FOR_KEY.get(key, ()))

    # ---- relations and actions -----------------------------------------------------------------------
    def _relation(self, item: ExtractedRelation) -> None:
        category = self._category(item.category)
        subject, target = self._entity(item.subject, category), self._entity(item.object, category)
        edges = self._edges.setdefault((subject[0], subject[1], item.label, target[0], target[1]), [])
        same = next((e for e in edges if overlaps(e['scope_sets'], self.scope_sets)), None)
        if same is not None:
            if not same.get('_planned'):
                self.plan.refreshed_relations.append(bare(same['id']) or '')
            self._outcome(ref(same['id']) or '', 'updated')
            return
        rel_id = new_id()
        self.plan.new_relations.append(
            {'id': rel_id, 'from_key': subject, 'to_key': target, 'label': item.label, **self._fact_fields(category)}
        )
        edges.append({'id': f'relates_to:{rel_id}', 'scope_sets': self.scope_sets, '_planned': True})
        self.diff.relations.append(
            {'subject': entity_ref(subject), 'label': item.label, 'object': entity_ref(target), 'memoryCategory': category}
        )
        self._outcome(f'relates_to:{rel_id}', 'created')

    def _action(self, item: ExtractedAction) -> None:
        category = self._category(item.category) if item.category else 'context'
        actor = self._entity(item.actor, category)
        target = self._entity(item.object, category) if item.object else None
        action_id = new_id()
        fields = self._fact_fields(category)
        fields.pop('confirmed_at')
        self.plan.new_actions.append(
            {
                'id': action_id,
                'actor_key': actor,
                'object_key': target,
                'verb': item.verb,
                'object_text': item.object_text,
                'summary': item.summary,
                'occurred_at': item.occurred_at,
                **fields,
            }
        )
        self.diff.actions.append(
            {
                'actor': entity_ref(actor),
                'verb': item.verb,
                'object': entity_ref(target) if target else None,
                'objectText': item.object_text,
                'occurredAt': item.occurred_at.isoformat() if item.occurred_at else None,
                'summary': item.summary,
                'memoryCategory': category,
            }
        )
        self._outcome(f'action:{action_id}', 'created')

    # ---- uncertainties and instructions --------------------------------------------------------------
    def _uncertainty(self, item: ExtractedUncertainty) -> None:
        entity = self._entity(item.entity, self.default_category) if item.entity is not None else None
        if entity is not None and item.key:
            self._flagged_here.add((entity[0], entity[1], item.key))
        self._new_uncertainty(item.about, item.reason, item.kind, entity, item.key)

    def _new_uncertainty(self, about: str, reason: str, kind: str, entity: list[str] | None, key: str | None) -> None:
        uncertainty_id = new_id()
        self.plan.uncertainties.append(
            {
                'id': uncertainty_id,
                'about': about,
                'reason': reason,
                'kind': kind,
                'entity_key': entity,
                'key': key,
                'source_turn': self.source.turn,
                'resolved': False,
                'scope_sets': self.scope_sets,
                'created_at': self.plan.now,
            }
        )
        self.diff.uncertainties.append({'about': about, 'reason': reason})
        self._outcome(f'uncertainty:{uncertainty_id}', 'created')

    def _instruction(self, item: ExtractedInstruction) -> None:
        """Never superseded; only a same label + description restatement in an overlapping scope merges (§6.4)."""
        label_key, description_key = fold(item.label), fold(item.description)
        planned = next(
            (i for i in self.plan.new_instructions if (i['label_key'], i['description_key']) == (label_key, description_key)), None
        )
        if planned is not None:
            return  # said twice in one turn
        candidates = self.store.instructions_matching(label_key, description_key)
        self.plan.instruction_guards.append(InstructionGuard(label_key, description_key, [bare(c['id']) or '' for c in candidates]))
        match = next((c for c in candidates if overlaps(c['scope_sets'], self.scope_sets)), None)
        if match is not None:
            self.plan.merged_instructions.append((bare(match['id']) or '', self.source.turn))
            self.diff.instructions.append({'id': ref(match['id']), 'label': match['label'], 'description': match['description']})
            self._outcome(ref(match['id']) or '', 'merged')
            return
        instruction_id = new_id()
        turn = self.source.turn
        self.plan.new_instructions.append(
            {
                'id': instruction_id,
                'label': item.label.strip(),
                'description': item.description.strip(),
                'label_key': label_key,
                'description_key': description_key,
                'active': True,
                'source_turn': turn,
                'source_turns': [turn] if turn else [],
                'merged_count': 0,
                'scope_sets': self.scope_sets,
                'created_at': self.plan.now,
                'updated_at': self.plan.now,
            }
        )
        self.diff.instructions.append(
            {'id': f'instruction:{instruction_id}', 'label': item.label.strip(), 'description': item.description.strip()}
        )
        self._outcome(f'instruction:{instruction_id}', 'created')

    # ---- shared ----------------------------------------------------------------------------------------
    def _fact_fields(self, category: MemoryCategory) -> dict[str, Any]:
        """Provenance, category, initial importance, times and scope shared by every new fact row."""
        return {
            'memory_category': category,
            'importance': INITIAL_IMPORTANCE[category],
            'source': self.source.as_row(),
            'source_turn': self.source.turn,
            'valid_from': self.known_at,
            'created_at': self.known_at,
            'confirmed_at': self.plan.now,
            'scope_sets': self.scope_sets,
        }

    def _outcome(self, record: str, outcome: str) -> None:
        if self.plan.decision_trace is not None:
            self.plan.decision_trace['outcomes'].append({'record': record, 'outcome': outcome})


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
