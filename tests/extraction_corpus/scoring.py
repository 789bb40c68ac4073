"""Load the corpus, turn labels and extractions into comparable items, and score them.

This module is the one place that defines when a predicted item matches an expected one; the unit test
(``tests/unit/test_extraction_corpus.py``) and the benchmark (``bench/extraction_quality.py``) both use it.

Matching: items of the same kind whose core fields are equal after normalisation (case-folded, single
spaces, surrounding punctuation and a leading article dropped); "strict" fields (dates, tentative,
invalidated value) must be equal too (absent on the label = absent on the prediction); "optional" fields
(category, instruction label, uncertainty entity/key) are compared only when the label gives them.
Each expected item matches at most one predicted item.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_memory.extraction.model import (
    EntityRef,
    ExtractedUncertainty,
    Extraction,
    ExtractionContext,
    KnownEntity,
    PriorTurn,
)
from agent_memory.extraction.stage0.people import PERSON_RELATIONS
from agent_memory.vocabulary import SELF, normalise_name, normalise_type

CORPUS_DIR = Path(__file__).resolve().parent
# dev: written first, the rules were developed against it; holdout: written next, measured once, then used to fix general
# gaps; blind: written last and measured without any change made after it (the honest estimate for unseen phrasing);
# blind2: a second split in other registers (lowercase, typos, long compound sentences, dashes, cue after the clause),
# blind until issue 11's register fixes used its failures; blind3: written before those fixes and never tuned on; blind4:
# written by a developer who did not read the extractor, never tuned on.
SPLITS = ('dev', 'holdout', 'blind', 'blind2', 'blind3', 'blind4')
RECENT_TURNS = 6

FAMILIES = (
    'instruction',
    'identity',
    'preference',
    'key_value',
    'negation',
    'self_correction',
    'ambiguous_reference',
    'known_entity',
    'temporal',
    'sarcasm',
    'action',
    'context',
    'clarification',
)
_IDENTITY_KEYS = frozenset({'name', 'preferred_name', 'title', 'occupation', 'employer', 'location', 'hometown', 'language'})
_PREFERENCE_KEYS = frozenset({'likes', 'dislikes', 'preference'})
_CONTEXT_KEYS = frozenset({'current_location', 'working_on', 'working_from', 'status'})
_RELATION_KEYS = {'works_at': 'employer', 'lives_in': 'location', 'located_in': 'location'}
_UNCERTAINTY_FAMILIES = {
    'self_correction': 'self_correction',
    'ambiguous_reference': 'ambiguous_reference',
    'unresolved_time': 'temporal',
    'sarcasm': 'sarcasm',
}

_EDGE_PUNCT = ' \t\n.,;:!?"\'“”‘’()[]*'
_ARTICLE = re.compile(r'^(?:the|a|an)\s+')
_SPACES = re.compile(r'\s+')


# ---------------------------------------------------------------------------------------------- corpus


@dataclass(frozen=True)
class Turn:
    session: str
    index: int
    role: str
    ts: dt.datetime
    text: str
    expect: tuple[dict[str, Any], ...]
    open_uncertainties: tuple[tuple[str, str | None, str | None], ...] = ()

    @property
    def ref(self) -> str:
        return f'{self.session}#{self.index + 1}'


@dataclass(frozen=True)
class Session:
    name: str
    split: str
    known_entities: tuple[tuple[str, str], ...]
    turns: tuple[Turn, ...]


def load_corpus(splits: Iterable[str] = SPLITS) -> list[Session]:
    return [
        _load_session(json.loads(path.read_text(encoding='utf-8')), split)
        for split in splits
        for path in sorted((CORPUS_DIR / split).glob('*.json'))
    ]


def _load_session(raw: dict[str, Any], split: str) -> Session:
    name = raw['session']
    turns = tuple(
        Turn(
            session=name,
            index=i,
            role=t['role'],
            ts=dt.datetime.fromisoformat(t['ts']),
            text=t['text'],
            expect=tuple(t['expect']),
            open_uncertainties=tuple((u[0], *(list(u[1:]) + [None, None])[:2]) for u in t.get('open_uncertainties', [])),
        )
        for i, t in enumerate(raw['turns'])
    )
    known = tuple((k[0], k[1]) for k in raw.get('known_entities', []))
    return Session(name=name, split=split, known_entities=known, turns=turns)


def context_for(session: Session, turn: Turn) -> ExtractionContext:
    """What the pipeline would hand the extractor for this turn: vocabulary, recent turns, open uncertainties."""
    previous = session.turns[max(0, turn.index - RECENT_TURNS) : turn.index]
    return ExtractionContext(
        role=turn.role,
        observed_at=turn.ts,
        known_entities=tuple(KnownEntity(type=t, name=n) for t, n in session.known_entities),
        recent_turns=tuple(PriorTurn(role=p.role, content=p.text, observed_at=p.ts) for p in previous),
        open_uncertainties=tuple(
            ExtractedUncertainty(
                about=f'{key} of {entity}',
                reason='open before this turn',
                kind=kind,
                entity=_entity_ref(entity) if entity else None,
                key=key,
            )
            for kind, entity, key in turn.open_uncertainties
        ),
    )


def _entity_ref(label: str) -> EntityRef:
    if label == 'self':
        return EntityRef.me()
    kind, _, name = label.partition(':')
    return EntityRef(type=kind, name=name)


# ---------------------------------------------------------------------------------------------- items


@dataclass(frozen=True)
class Item:
    kind: str  # attr | rel | action | instr | unc | inval
    core: tuple[str | None, ...]
    strict: tuple[str | None, ...] = ()
    optional: tuple[tuple[str, str | None], ...] = ()  # on a label: only the fields it gives
    source: str = ''  # human-readable form for reports

    def matches(self, predicted: Item) -> bool:
        if (self.kind, self.core, self.strict) != (predicted.kind, predicted.core, predicted.strict):
            return False
        given = dict(predicted.optional)
        return all(given.get(name) == value for name, value in self.optional)


def norm_text(value: str | None) -> str | None:
    if value is None:
        return None
    text = _SPACES.sub(' ', unicodedata.normalize('NFC', value)).strip(_EDGE_PUNCT).casefold()
    return _ARTICLE.sub('', text)


def norm_key(value: str | None) -> str | None:
    return None if value is None else re.sub(r'[^a-z0-9]+', '_', value.casefold()).strip('_')


def norm_entity(label: str | EntityRef | None) -> str | None:
    if label is None:
        return None
    if isinstance(label, str):
        label = _entity_ref(label)
    name = SELF if label.is_self else normalise_name(label.name)
    return f'{normalise_type(label.type)}:{name}'


def _date(value: dt.datetime | None) -> str | None:
    return value.date().isoformat() if value is not None else None


def expected_items(turn: Turn) -> list[Item]:
    items = []
    for raw in turn.expect:
        if 'attr' in raw and raw['attr'][1] == 'language' and ', ' in raw['attr'][2]:  # one value per language now
            items += [_label_item({**raw, 'attr': [raw['attr'][0], 'language', value]}) for value in raw['attr'][2].split(', ')]
        else:
            items.append(_label_item(raw))
    return items


def _label_item(raw: dict[str, Any]) -> Item:
    source = json.dumps(raw, ensure_ascii=False)
    if 'attr' in raw:
        entity, key, value = raw['attr']
        optional: tuple[tuple[str, str | None], ...] = (('cat', raw['cat']),) if 'cat' in raw else ()
        strict = (str(bool(raw.get('tentative', False))), raw.get('from'), raw.get('until'))
        return Item('attr', (norm_entity(entity), norm_key(key), norm_text(value)), strict, optional, source)
    if 'rel' in raw:
        subject, label, obj = raw['rel']
        return Item('rel', (norm_entity(subject), norm_key(label), norm_entity(obj)), source=source)
    if 'action' in raw:
        actor, verb = raw['action']
        return Item('action', (norm_entity(actor), norm_text(verb)), (raw.get('at'),), source=source)
    if 'instr' in raw:
        optional = (('label', norm_key(raw['label'])),) if 'label' in raw else ()
        return Item('instr', (norm_text(raw['instr']),), optional=optional, source=source)
    if 'unc' in raw:
        kind, *rest = raw['unc']
        names = ('entity', 'key')
        values = (norm_entity(rest[0]) if rest else None, norm_key(rest[1]) if len(rest) > 1 else None)
        optional = tuple((n, v) for n, v, given in zip(names, values, (len(rest) > 0, len(rest) > 1), strict=True) if given)
        return Item('unc', (kind,), optional=optional, source=source)
    if 'inval' in raw:
        entity, key, *value = raw['inval']
        return Item('inval', (norm_entity(entity), norm_key(key)), (norm_text(value[0]) if value else None,), source=source)
    raise ValueError(f'unknown corpus item: {raw}')


def predicted_items(extraction: Extraction) -> list[Item]:
    items: list[Item] = []
    for a in extraction.attributes:
        strict = (str(a.tentative), _date(a.valid_from), _date(a.valid_until))
        items.append(Item('attr', (norm_entity(a.entity), norm_key(a.key), norm_text(a.value)), strict, (('cat', a.category),), _show(a)))
    for r in extraction.relations:
        items.append(Item('rel', (norm_entity(r.subject), norm_key(r.label), norm_entity(r.object)), source=_show(r)))
    for c in extraction.actions:
        items.append(Item('action', (norm_entity(c.actor), norm_text(c.verb)), (_date(c.occurred_at),), source=_show(c)))
    for i in extraction.instructions:
        items.append(Item('instr', (norm_text(i.description),), optional=(('label', norm_key(i.label)),), source=_show(i)))
    for u in extraction.uncertainties:
        if u.kind == 'hedge':
            continue  # labelled before hedges became open unknowns: measured on tests/natural_corpus instead
        optional = (('entity', norm_entity(u.entity)), ('key', norm_key(u.key)))
        items.append(Item('unc', (u.kind,), optional=optional, source=_show(u)))
    for v in extraction.invalidations:
        items.append(Item('inval', (norm_entity(v.entity), norm_key(v.key)), (norm_text(v.value),), source=_show(v)))
    return items


KIN_LABELS = frozenset(label for label, _ in PERSON_RELATIONS.values()) | {'pet'}


def _show(model: Any) -> str:
    return f'{type(model).__name__}({model.model_dump(exclude_defaults=True, mode="json")})'


# ---------------------------------------------------------------------------------------------- families


def families(item: Item, turn: Turn) -> tuple[str, ...]:
    """The case families an item counts towards (a dated item also counts towards ``temporal``)."""
    base = _base_family(item, turn)
    dated = (item.kind == 'attr' and (item.strict[1] or item.strict[2])) or (item.kind == 'action' and item.strict[0])
    return (base, 'temporal') if dated and base != 'temporal' else (base,)


def _base_family(item: Item, turn: Turn) -> str:
    if item.kind == 'instr':
        return 'instruction'
    if item.kind == 'unc':
        return _UNCERTAINTY_FAMILIES.get(str(item.core[0]), 'other')
    if item.kind == 'inval':
        return 'negation'
    if item.kind == 'action':
        return 'action'
    entity, key = item.core[0], item.core[1]
    if item.kind == 'rel':
        key = _RELATION_KEYS.get(str(key), str(key))
    elif item.strict[0] == 'True':
        return 'self_correction'
    if entity != norm_entity('self'):
        return 'known_entity'
    if any(norm_entity(e) == entity and norm_key(k) == key for _, e, k in turn.open_uncertainties if e and k):
        return 'clarification'
    if key in _CONTEXT_KEYS:
        return 'context'
    if key in _IDENTITY_KEYS:
        return 'identity'
    return 'preference' if key in _PREFERENCE_KEYS else 'key_value'


# ---------------------------------------------------------------------------------------------- scoring


@dataclass
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


@dataclass
class TurnOutcome:
    turn: Turn
    matched: list[tuple[Item, Item]]
    missed: list[Item]  # expected, not found
    spurious: list[Item]  # predicted, not expected


@dataclass
class Report:
    overall: Tally = field(default_factory=Tally)
    by_family: dict[str, Tally] = field(default_factory=lambda: {f: Tally() for f in FAMILIES})
    outcomes: list[TurnOutcome] = field(default_factory=list)

    @property
    def negative_turns(self) -> list[TurnOutcome]:
        return [o for o in self.outcomes if not o.turn.expect]

    @property
    def clean_negative_turns(self) -> int:
        return sum(1 for o in self.negative_turns if not o.spurious)

    def errors(self) -> Iterable[str]:
        for o in self.outcomes:
            for item in o.missed:
                yield f'{o.turn.ref} MISSED {item.source}  <- {o.turn.text!r}'
            for item in o.spurious:
                yield f'{o.turn.ref} SPURIOUS {item.source}  <- {o.turn.text!r}'


def match(expected: list[Item], predicted: list[Item]) -> tuple[list[tuple[Item, Item]], list[Item], list[Item]]:
    """Greedy one-to-one matching: (matched pairs, missed expected, spurious predicted)."""
    remaining = list(predicted)
    matched: list[tuple[Item, Item]] = []
    missed: list[Item] = []
    for exp in expected:
        hit = next((p for p in remaining if exp.matches(p)), None)
        if hit is None:
            missed.append(exp)
        else:
            remaining.remove(hit)
            matched.append((exp, hit))
    return matched, missed, remaining


def score(extract: Callable[[str, ExtractionContext], Extraction], sessions: list[Session] | None = None) -> Report:
    report = Report()
    for session in sessions if sessions is not None else load_corpus():
        for turn in session.turns:
            expected = expected_items(turn)
            predicted = predicted_items(extract(turn.text, context_for(session, turn)))
            if not any(i.kind == 'rel' and i.core[1] in KIN_LABELS for i in expected):
                # labelled before relatives and pets became entities of their own: measured on tests/natural_corpus instead
                predicted = [i for i in predicted if not (i.kind == 'rel' and i.core[1] in KIN_LABELS)]
            outcome = TurnOutcome(turn, *match(expected, predicted))
            report.outcomes.append(outcome)
            _count(report, outcome)
    return report


def _count(report: Report, outcome: TurnOutcome) -> None:
    def add(item: Item, attr: str) -> None:
        setattr(report.overall, attr, getattr(report.overall, attr) + 1)
        for fam in families(item, outcome.turn):
            tally = report.by_family.setdefault(fam, Tally())
            setattr(tally, attr, getattr(tally, attr) + 1)

    for exp, _ in outcome.matched:
        add(exp, 'tp')
    for item in outcome.missed:
        add(item, 'fn')
    for item in outcome.spurious:
        add(item, 'fp')
