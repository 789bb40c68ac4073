"""The natural-conversation corpus (``tests/natural_corpus/{tune,blind}``) and the one place that says when what the
memory holds matches what a careful note-taker would have written down (``README.md`` there says how it was written).

A conversation is ingested through the API as its speaker would send it; the memory's *current* state afterwards (what
``GET /state`` shows) is compared with the labels' end state. This module is pure: it takes the stored rows as plain
dicts and the labels as loaded JSON, so the benchmark (``bench/natural.py``) and the tests share it.

Matching rules:

* An entity is named by its speaker's name for first person, else by its own name; names compare case-folded, and a
  label's name matches a stored name equal to it or starting with it as whole words ("Ada" ↔ "Ada Okafor").
* Keys compare by concept (``KEY_GROUPS``): a label's key matches a stored key of the same group.
* Values compare normalised (case-folded, punctuation and a leading article dropped); the shorter must cover at least
  half of the longer's words, as whole words, so "St" never matches "St. Mary's Hospital".
* Relations compare subject, object and label group; employment and residence edges are shadows of facts and are left
  out on both sides (the labels do not have them).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CORPUS_DIR = Path(__file__).resolve().parent
SPLITS = ('cases', 'tune', 'tune2', 'blind')  # cases: the issue's own examples; tune, tune2: tuned on; blind: never

KEY_GROUPS: dict[str, frozenset[str]] = {
    'occupation': frozenset({'occupation', 'job', 'job_title', 'role', 'profession', 'position'}),
    'title': frozenset({'title', 'honorific'}),
    'location': frozenset({'location', 'lives_in', 'residence', 'city'}),
    'moved_from': frozenset({'moved_from', 'previous_location', 'former_location'}),
    'hometown': frozenset({'hometown', 'moved_from'}),
    'likes': frozenset({'likes', 'preference', 'loves', 'enjoys', 'drinks', 'favorite', 'favourite', 'plays'}),
    'dislikes': frozenset({'dislikes', 'hates'}),
    'plays': frozenset({'plays', 'likes'}),
    'language': frozenset({'language', 'languages', 'native_language', 'speaks'}),
    'studies': frozenset({'studies', 'school', 'university', 'studying', 'degree', 'major'}),
}
SHADOW_LABELS = frozenset({'works_at', 'lives_in', 'located_in', 'works_on'})
PET_LABELS = frozenset({'pet', 'has_pet', 'dog', 'cat', 'puppy', 'kitten', 'rabbit', 'hamster', 'parrot', 'bird', 'fish', 'horse',
                        'tortoise', 'turtle', 'guinea_pig', 'budgie', 'lizard', 'snake', 'ferret', 'gecko'})  # fmt: skip
RELATION_GROUPS: dict[str, frozenset[str]] = {
    'pet': PET_LABELS,
    'partner': frozenset({'partner', 'boyfriend', 'girlfriend', 'fiance', 'fiancee', 'spouse', 'husband', 'wife'}),
    'husband': frozenset({'husband', 'spouse', 'partner'}),
    'wife': frozenset({'wife', 'spouse', 'partner'}),
    'manager': frozenset({'manager', 'boss', 'supervisor'}),
    'colleague': frozenset({'colleague', 'coworker', 'co-worker', 'teammate', 'co-author'}),
    'son': frozenset({'son', 'child'}),  # a child named without a word for its sex is still the right child
    'daughter': frozenset({'daughter', 'child'}),
    'flatmate': frozenset({'flatmate', 'roommate', 'housemate'}),
}
FAMILIES = ('identity', 'work', 'residence', 'people', 'pets', 'health', 'preferences', 'other')
_FAMILY_OF_KEY = {
    'name': 'identity', 'preferred_name': 'identity', 'title': 'identity', 'age': 'identity', 'nationality': 'identity',
    'email': 'identity', 'language': 'identity',
    'occupation': 'work', 'employer': 'work', 'studies': 'work',
    'location': 'residence', 'moved_from': 'residence', 'hometown': 'residence',
    'diet': 'health', 'allergy': 'health',
    'likes': 'preferences', 'dislikes': 'preferences', 'plays': 'preferences',
    'species': 'pets', 'breed': 'pets',
}  # fmt: skip
ABBREVIATION_STUBS = frozenset({
    'st', 'dr', 'mr', 'mrs', 'ms', 'prof', 'mt', 'ft', 'ave', 'rd', 'jr', 'sr', 'ltd', 'inc', 'co', 'corp', 'dept', 'univ', 'no',
    'vs', 'etc', 'e', 'i', 'u', 'n', 'a', 'p', 'sgt', 'rev', 'gen', 'capt', 'lt', 'col',
})  # fmt: skip
_DONT_KNOW = re.compile(r"\b(?:don't know|do not know|don't have anything|nothing in memory|no record|not in memory|can't find)\b", re.I)
_WORD = re.compile(r"[\w']+")
_ARTICLE = re.compile(r'^(?:the|a|an|my|our|his|her|their)\s+')


@dataclass(frozen=True)
class Conversation:
    id: str
    path: Path
    speakers: tuple[str, ...]
    turns: tuple[dict[str, Any], ...]
    expected: dict[str, Any]
    questions: tuple[dict[str, Any], ...]

    @property
    def named(self) -> bool:
        """Two people talking to each other: each message is sent with its speaker's name."""
        return len(self.speakers) > 1


def load(split: str) -> list[Conversation]:
    folder = CORPUS_DIR / split
    conversations = []
    for path in sorted(folder.glob('*.json')):
        raw = json.loads(path.read_text(encoding='utf-8'))
        conversations.append(
            Conversation(raw['id'], path, tuple(raw['speakers']), tuple(raw['turns']), raw['expected'], tuple(raw.get('questions', [])))
        )
    return conversations


_SPELLED = (
    'one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty'
)
_NUMBER_WORDS = {word: str(n) for n, word in enumerate(_SPELLED.split(), start=1)}


def norm(text: str) -> str:
    """Case, quotes, punctuation and articles aside; a number word is its digits ("aged nine" is age 9)."""
    text = unicodedata.normalize('NFKC', text).casefold().replace('’', "'")
    text = ' '.join(_NUMBER_WORDS.get(w, w) for w in _WORD.findall(text))
    return _ARTICLE.sub('', text).strip()


def value_matches(label: str, stored: str) -> bool:
    a, b = norm(label).split(), norm(stored).split()
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if len(short) * 2 < len(long_):
        return False
    return any(long_[i : i + len(short)] == short for i in range(len(long_) - len(short) + 1))


def name_matches(label: str, stored: str) -> bool:
    a, b = norm(label).split(), norm(stored).split()
    return bool(a) and (a == b or b[: len(a)] == a or a[: len(b)] == b)


def key_matches(label: str, stored: str) -> bool:
    if label == stored:
        return True
    if label == 'likes' and stored.startswith(('favorite_', 'favourite_')):
        return True
    return stored in KEY_GROUPS.get(label, frozenset())


def relation_matches(label: str, stored: str) -> bool:
    label, stored = label.casefold(), stored.casefold().removeprefix('has_')
    if label == stored:
        return True
    return stored in RELATION_GROUPS.get(label, frozenset())


def family_of(key: str, entity_kind: str) -> str:
    if entity_kind == 'pet':
        return 'pets'
    if entity_kind == 'person':
        return 'people'
    for group, keys in KEY_GROUPS.items():
        if key in keys and group in _FAMILY_OF_KEY:
            return _FAMILY_OF_KEY[group]
    return _FAMILY_OF_KEY.get(key, 'other')


def says_dont_know(reply: str) -> bool:
    return bool(_DONT_KNOW.search(reply))


# ---------------------------------------------------------------------------------------------------- the stored side


@dataclass(frozen=True)
class Stored:
    """What the memory holds after the conversation, as plain values (entity ids resolved to names)."""

    facts: list[tuple[str, str, str, int | None]]  # (entity name, key, value, source turn index or None)
    relations: list[tuple[str, str, str]]  # (subject name, label, object name)
    entities: list[tuple[str, str, int | None]]  # (type, name, first source turn index)
    instructions: list[tuple[str, int | None]]  # (description, source turn index)
    unknowns: list[tuple[str, int | None]]  # (about, source turn index) of open uncertainties
    events: int = 0


@dataclass
class Score:
    """Counts over one or more conversations; each ratio is computed from them."""

    stored: dict[str, int] = field(default_factory=dict)  # family -> stored facts
    stored_right: dict[str, int] = field(default_factory=dict)
    labelled: dict[str, int] = field(default_factory=dict)  # family -> labelled facts
    found: dict[str, int] = field(default_factory=dict)
    corrections: list[int] = field(default_factory=lambda: [0, 0])  # applied, labelled
    negations_stored: list[int] = field(default_factory=lambda: [0, 0])  # positive fact stored, labelled negations
    hedges: list[int] = field(default_factory=lambda: [0, 0])  # became an open unknown, labelled hedges
    hedge_facts: int = 0  # a hedged value stored as a fact
    cut_values: int = 0
    fragment_entities: int = 0
    chit_chat_instructions: int = 0
    instructions: list[int] = field(default_factory=lambda: [0, 0])  # labelled instructions stored, labelled
    events: int = 0
    wrong: list[str] = field(default_factory=list)  # stored facts that match no label (for reading, not for tuning)
    missed: list[str] = field(default_factory=list)

    def add(self, other: Score) -> None:
        for name in ('stored', 'stored_right', 'labelled', 'found'):
            mine, theirs = getattr(self, name), getattr(other, name)
            for key, value in theirs.items():
                mine[key] = mine.get(key, 0) + value
        for name in ('corrections', 'negations_stored', 'hedges', 'instructions'):
            mine, theirs = getattr(self, name), getattr(other, name)
            mine[0] += theirs[0]
            mine[1] += theirs[1]
        for name in ('hedge_facts', 'cut_values', 'fragment_entities', 'chit_chat_instructions', 'events'):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.wrong += other.wrong
        self.missed += other.missed

    def precision(self, family: str | None = None) -> float:
        stored = sum(v for k, v in self.stored.items() if family in (None, k))
        right = sum(v for k, v in self.stored_right.items() if family in (None, k))
        return right / stored if stored else float('nan')

    def recall(self, family: str | None = None) -> float:
        labelled = sum(v for k, v in self.labelled.items() if family in (None, k))
        found = sum(v for k, v in self.found.items() if family in (None, k))
        return found / labelled if labelled else float('nan')


def _bump(counts: dict[str, int], key: str) -> None:
    counts[key] = counts.get(key, 0) + 1


def entity_kinds(conversation: Conversation) -> dict[str, str]:
    """Label entity name (normalised) -> 'speaker' | 'pet' | 'person' | 'other', from the labels themselves."""
    kinds: dict[str, str] = {norm(s): 'speaker' for s in conversation.speakers}
    for fact in conversation.expected.get('facts', []):
        if fact['key'] in ('species', 'breed'):
            kinds.setdefault(norm(fact['entity']), 'pet')
    for rel in conversation.expected.get('relations', []):
        if relation_matches('pet', rel['relation']):
            kinds.setdefault(norm(rel['object']), 'pet')
        else:
            kinds.setdefault(norm(rel['object']), 'person')
    for fact in conversation.expected.get('facts', []):
        kinds.setdefault(norm(fact['entity']), 'other')
    return kinds


def _kind(kinds: dict[str, str], name: str) -> str:
    for label, kind in kinds.items():
        if name_matches(label, name):
            return kind
    return 'other'


def _is_cut(value: str, turn_text: str | None) -> bool:
    """A value cut at an abbreviation's full stop: its last word is an abbreviation stub followed by "." in the turn."""
    tokens = norm(value).split()
    if not tokens or turn_text is None:
        return False
    last = tokens[-1]
    if last not in ABBREVIATION_STUBS:
        return False
    return re.search(rf'\b{re.escape(value.strip().split()[-1])}\.\s*\S', turn_text) is not None


def score(conversation: Conversation, stored: Stored) -> Score:
    result = Score(events=stored.events)
    expected = conversation.expected
    kinds = entity_kinds(conversation)
    texts = [t['text'] for t in conversation.turns]
    labels = list(expected.get('facts', []))
    used: set[int] = set()
    for entity, key, value, turn in stored.facts:
        family = family_of(key, _kind(kinds, entity)) if _kind(kinds, entity) in ('pet', 'person') else family_of(key, 'x')
        _bump(result.stored, family)
        match = next(
            (i for i, f in enumerate(labels) if i not in used and name_matches(f['entity'], entity) and key_matches(f['key'], key)
             and value_matches(f['value'], value)),
            None,
        )  # fmt: skip
        if match is None:
            # a second stored value for a labelled fact (the same value twice under two keys) is not a wrong fact
            again = any(
                name_matches(f['entity'], entity) and value_matches(f['value'], value) and key_matches(f['key'], key) for f in labels
            )
            if again:
                _bump(result.stored_right, family)
            else:
                result.wrong.append(f'{conversation.id}: {entity} {key}={value!r} (turn {turn})')
        else:
            used.add(match)
            _bump(result.stored_right, family)
        if turn is not None and _is_cut(value, texts[turn] if 0 <= turn < len(texts) else None):
            result.cut_values += 1
    for i, fact in enumerate(labels):
        kind = _kind(kinds, fact['entity'])
        family = family_of(fact['key'], kind if kind in ('pet', 'person') else 'x')
        _bump(result.labelled, family)
        if i in used:
            _bump(result.found, family)
        else:
            result.missed.append(f'{conversation.id}: {fact["entity"]} {fact["key"]}={fact["value"]!r}')
    rel_labels = [r for r in expected.get('relations', []) if r['relation'] not in SHADOW_LABELS]
    rel_used: set[int] = set()
    for subject, label, obj in stored.relations:
        if label in SHADOW_LABELS:
            continue
        family = 'pets' if _kind(kinds, obj) == 'pet' or label in PET_LABELS else 'people'
        _bump(result.stored, family)
        match = next(
            (i for i, r in enumerate(rel_labels) if i not in rel_used and name_matches(r['subject'], subject)
             and name_matches(r['object'], obj) and relation_matches(r['relation'], label)),
            None,
        )  # fmt: skip
        if match is None:
            result.wrong.append(f'{conversation.id}: {subject} -{label}-> {obj}')
        else:
            rel_used.add(match)
            _bump(result.stored_right, family)
    for i, rel in enumerate(rel_labels):
        family = 'pets' if relation_matches('pet', rel['relation']) else 'people'
        _bump(result.labelled, family)
        if i in rel_used:
            _bump(result.found, family)
        else:
            result.missed.append(f'{conversation.id}: {rel["subject"]} -{rel["relation"]}-> {rel["object"]}')
    current = [(e, k, v) for e, k, v, _ in stored.facts]
    for c in expected.get('corrections', []):
        result.corrections[1] += 1
        new_held = any(name_matches(c['entity'], e) and key_matches(c['key'], k) and value_matches(c['new'], v) for e, k, v in current)
        old_held = any(name_matches(c['entity'], e) and key_matches(c['key'], k) and value_matches(c['old'], v) for e, k, v in current)
        result.corrections[0] += int(new_held and not old_held)
    for n in expected.get('negations', []):
        result.negations_stored[1] += 1
        held = any(name_matches(n['entity'], e) and key_matches(n['key'], k) and value_matches(n['value'], v) for e, k, v in current)
        result.negations_stored[0] += int(held)
    unknown_turns = {t for _, t in stored.unknowns if t is not None}
    for h in expected.get('hedges', []):
        result.hedges[1] += 1
        result.hedges[0] += int(h['turn'] in unknown_turns or h.get('resolved_by_turn') is not None)
        hedged = set(norm(h['about']).split())
        for _, _, value, turn in stored.facts:
            if turn == h['turn'] and h.get('resolved_by_turn') is None and norm(value) and set(norm(value).split()) <= hedged:
                result.hedge_facts += 1
    label_names = [norm(s) for s in conversation.speakers]
    label_names += [norm(f['entity']) for f in labels] + [norm(f['value']) for f in labels]
    label_names += [norm(r['object']) for r in rel_labels] + [norm(n['value']) for n in expected.get('not_current', [])]
    for _, name, turn in stored.entities:
        tokens = norm(name).split()
        if not tokens:
            result.fragment_entities += 1
            continue
        if any(name_matches(label, name) or value_matches(label, name) for label in label_names if label):
            continue
        text = texts[turn] if turn is not None and 0 <= turn < len(texts) else ''
        stub = len(tokens) == 1 and tokens[0] in ABBREVIATION_STUBS
        cut_name = bool(text) and re.search(rf'\b{re.escape(name)}\.\s*[A-Z]', text) is not None
        if stub or cut_name:
            result.fragment_entities += 1
    labelled_turns = {i['turn'] for i in expected.get('instructions', [])}
    stored_turns = {t for _, t in stored.instructions}
    for description, turn in stored.instructions:
        if turn not in labelled_turns:
            result.chit_chat_instructions += 1
            result.wrong.append(f'{conversation.id}: instruction {description!r} (turn {turn})')
    result.instructions = [len(labelled_turns & stored_turns), len(labelled_turns)]
    return result


@dataclass
class Answers:
    answerable: int = 0
    correct: int = 0
    answerable_dont_know: int = 0
    unanswerable: int = 0
    said_dont_know: int = 0
    stated_value: int = 0
    wrong_old_value: int = 0  # an answer quoting a value corrected away
    log: list[str] = field(default_factory=list)

    def add(self, other: Answers) -> None:
        for name in ('answerable', 'correct', 'answerable_dont_know', 'unanswerable', 'said_dont_know', 'stated_value', 'wrong_old_value'):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.log += other.log


def score_answer(question: dict[str, Any], reply: str, into: Answers) -> None:
    dont_know = says_dont_know(reply)
    if question.get('answer') is None:
        into.unanswerable += 1
        into.said_dont_know += int(dont_know)
        into.stated_value += int(not dont_know)
        if not dont_know:
            into.log.append(f'unanswerable answered: {question["q"]!r} -> {reply[:160]!r}')
        return
    into.answerable += 1
    accept = [question['answer'], *question.get('accept', [])]
    wrong = question.get('wrong', [])
    quoted_wrong = any(norm(w) and norm(w) in norm(reply) for w in wrong)
    right = not dont_know and any(norm(a) and norm(a) in norm(reply) for a in accept) and not quoted_wrong
    into.correct += int(right)
    into.answerable_dont_know += int(dont_know)
    into.wrong_old_value += int(quoted_wrong)
    if not right:
        into.log.append(f'missed: {question["q"]!r} (want {question["answer"]!r}) -> {reply[:160]!r}')


def ratios(pairs: Iterable[tuple[int, int]]) -> list[float]:
    return [a / b if b else float('nan') for a, b in pairs]
