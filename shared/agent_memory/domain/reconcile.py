"""The reconciler for caller-supplied triples (CONTRACT §6.3): entities, supersession, refresh, relations.

It reads the live rows at every address the triples touch, decides each outcome in memory, and
returns a ``WritePlan`` plus the extraction diff. The store applies the plan in one transaction
and re-checks the addresses; on a concurrent change the caller re-plans (``run_with_retry``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.records import bare, ref, rid
from agent_memory.domain.ids import new_id
from agent_memory.domain.scopes import ScopeSets, overlaps
from agent_memory.domain.vocabulary import (
    INITIAL_IMPORTANCE,
    MemoryCategory,
    clean_display_name,
    normalise_name,
    normalise_type,
)
from agent_memory.domain.write_plan import AddressGuard, WritePlan
from agent_memory.models import Triple

AUTHORITATIVE = frozenset({'upsert', 'document'})


@dataclass
class Source:
    kind: str  # 'upsert' for triples, 'turn' for extraction
    ref: str | None
    session_id: str
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


class TripleReconciler:
    def __init__(self, store: MemoryStore, plan: WritePlan, diff: Diff, source: Source, scope_sets: ScopeSets,
                 default_category: MemoryCategory, floor: float, known_at: dt.datetime) -> None:  # fmt: skip
        self.store, self.plan, self.diff, self.source = store, plan, diff, source
        self.scope_sets, self.default_category, self.floor, self.known_at = scope_sets, default_category, floor, known_at
        self._entities: dict[tuple[str, str], dict[str, Any]] = {}
        self._live: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self._edges: dict[tuple[str, str, str, str, str], list[dict[str, Any]]] = {}
        self._existing: set[tuple[str, str]] = set()

    def run(self, triples: list[Triple]) -> None:
        keys = [entity_key(t.entity.type, t.entity.name) for t in triples]
        keys += [entity_key(t.target.type, t.target.name) for t in triples if t.target]
        self._existing = self.store.existing_entities([list(k) for k in {tuple(k) for k in keys}])
        addresses = {(tuple(entity_key(t.entity.type, t.entity.name)), t.key) for t in triples if t.target is None}
        for row in self.store.live_attributes([(list(e), k) for e, k in sorted(addresses)], self.plan.now):
            self._live.setdefault((row['entity'].id[0], row['entity'].id[1], row['key']), []).append(row)
        for entity, key in sorted(addresses):
            seen = [bare(r['id']) or '' for r in self._live.get((entity[0], entity[1], key), [])]
            self.plan.guards.append(AddressGuard(list(entity), key, seen))
        edges = {
            (tuple(entity_key(t.entity.type, t.entity.name)), t.key, tuple(entity_key(t.target.type, t.target.name)))
            for t in triples
            if t.target
        }
        for row in self.store.live_relations([(list(s), label, list(d)) for s, label, d in sorted(edges)], self.plan.now):
            self._edges.setdefault((*row['in'].id, row['label'], *row['out'].id), []).append(row)
        for triple in triples:
            category = triple.memory_category or self.default_category
            subject = self._entity(triple.entity.type, triple.entity.name, category)
            if triple.target is not None:
                self._relation(subject, triple.key, self._entity(triple.target.type, triple.target.name, category), category)
            else:
                self._attribute(subject, triple.key, triple.value_text, category, triple.confidence)

    def _entity(self, entity_type: str, name: str, category: MemoryCategory) -> list[str]:
        key = entity_key(entity_type, name)
        if (key[0], key[1]) not in self._entities:
            is_new = (key[0], key[1]) not in self._existing
            row = {
                'key': key,
                'name': clean_display_name(name),
                'type': key[0],
                'memory_category': category,
                'importance': INITIAL_IMPORTANCE[category],
                'scope_sets': self.scope_sets,
                'created_at': self.plan.now,
                'updated_at': self.plan.now,
            }
            self._entities[(key[0], key[1])] = row
            self.plan.entities.append(row)
            self.diff.entities.append(
                {'id': entity_ref(key), 'name': row['name'], 'entityType': key[0], 'memoryCategory': category, 'isNew': is_new}
            )
        return key

    def _attribute(self, entity: list[str], key: str, value: str, category: MemoryCategory, confidence: float | None) -> None:
        conf = 1.0 if confidence is None else confidence
        live = self._live.setdefault((entity[0], entity[1], key), [])
        same_scope = [r for r in live if overlaps(r['scope_sets'], self.scope_sets)]
        same_value = next((r for r in same_scope if r['value'] == value), None)
        if same_value is not None:
            if not same_value.get('_planned'):
                self.plan.refreshed_attributes.append((bare(same_value['id']) or '', conf))
            self._outcome(ref(same_value['id']) or '', 'updated')
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
        conflicting = [] if category == 'context' else [r for r in same_scope if r.get('memory_category') != 'context']
        for old in conflicting:
            if can_supersede(old, self.source.kind, conf, self.floor):
                self._supersede(old, row, entity, key, value)
            else:
                self._flag(old, entity, key, value)
        self.plan.new_attributes.append(row)
        live.append({**row, 'id': f'attribute:{attr_id}', '_planned': True})
        self.diff.attributes.append(
            {'id': f'attribute:{attr_id}', 'entityId': entity_ref(entity), 'key': key, 'value': value, 'memoryCategory': category}
        )
        self._outcome(f'attribute:{attr_id}', 'created')

    def _supersede(self, old: dict[str, Any], row: dict[str, Any], entity: list[str], key: str, value: str) -> None:
        old_id = bare(old['id']) if not old.get('_planned') else str(old['id']).split(':', 1)[1]
        if old.get('_planned'):
            # superseded within the same request: the earlier planned row is born closed
            planned = next(a for a in self.plan.new_attributes if a['id'] == old_id)
            planned['valid_until'] = self.plan.now
            planned['superseded_by'] = rid('attribute', row['id'])
        else:
            self.plan.superseded.append((old_id or '', row['id']))
        row['supersedes'] = rid('attribute', old_id or '')
        self._live[(entity[0], entity[1], key)].remove(old)
        self.diff.corrections.append({'entityId': entity_ref(entity), 'key': key, 'oldValue': old['value'], 'newValue': value})
        self._outcome(f'attribute:{old_id}', 'superseded')

    def _flag(self, old: dict[str, Any], entity: list[str], key: str, value: str) -> None:
        about = f'{entity_ref(entity)} {key}'
        old_kind = (old.get('source') or {}).get('kind', 'turn')
        if old_kind in AUTHORITATIVE and self.source.kind not in AUTHORITATIVE:
            reason = f'curated value "{old["value"]}" contradicted by "{value}" from conversation'
            kind = 'cross_provenance'
        else:
            reason = f'"{value}" conflicts with "{old["value"]}" but is not confident enough to replace it'
            kind = 'confidence_floor'
        self.plan.uncertainties.append(
            {
                'id': new_id(),
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
        self._outcome(ref(old['id']) or '', 'flagged')

    def _relation(self, subject: list[str], label: str, target: list[str], category: MemoryCategory) -> None:
        edges = self._edges.setdefault((subject[0], subject[1], label, target[0], target[1]), [])
        same = next((e for e in edges if overlaps(e['scope_sets'], self.scope_sets)), None)
        if same is not None:
            if not same.get('_planned'):
                self.plan.refreshed_relations.append(bare(same['id']) or '')
            self._outcome(ref(same['id']) or '', 'updated')
            return
        rel_id = new_id()
        row = {
            'id': rel_id,
            'from_key': subject,
            'to_key': target,
            'label': label,
            **self._fact_fields(category),
        }
        self.plan.new_relations.append(row)
        edges.append({'id': f'relates_to:{rel_id}', 'scope_sets': self.scope_sets, '_planned': True})
        self.diff.relations.append(
            {'subject': entity_ref(subject), 'label': label, 'object': entity_ref(target), 'memoryCategory': category}
        )
        self._outcome(f'relates_to:{rel_id}', 'created')

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
        assert self.plan.decision_trace is not None
        self.plan.decision_trace['outcomes'].append({'record': record, 'outcome': outcome})
