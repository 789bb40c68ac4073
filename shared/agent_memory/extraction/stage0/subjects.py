"""Who a clause is about: the speaker, a named entity, or a reference stage 0 cannot pin down.

Statements about a named entity are rewritten into first person ("Alice lives in Rome" → "I live in Rome") so one
set of patterns serves the speaker and everyone else; the caller then binds the result to that entity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.extraction.model import EntityRef, ExtractionContext, KnownEntity
from agent_memory.extraction.stage0.lexicon import NON_EVENT_VERBS, is_past_form, lemma, word_set
from agent_memory.extraction.stage0.preferences import favourite_as_first_person, topicalised_as_first_person
from agent_memory.extraction.stage0.text import DURATION, PROPER, is_plausible_name
from agent_memory.vocabulary import normalise_type

_FIRST_PERSON = re.compile(r"^(?:i|i'm|i've|i'll|i'd|my|we|we're|we've|we'll|our)\b", re.IGNORECASE)
_THIRD_TO_FIRST = {
    'works': 'work',
    'lives': 'live',
    'prefers': 'prefer',
    'likes': 'like',
    'loves': 'love',
    'hates': 'hate',
    'dislikes': 'dislike',
    'enjoys': 'enjoy',
    'speaks': 'speak',
    'has': 'have',
    "doesn't": "don't",
    'does': 'do',
    'is': "'m",
    "isn't": "'m not",
    'was': 'was',
    'uses': 'use',
    'needs': 'need',
    'wants': 'want',
}
_UNKNOWN_SUBJECT_VERBS = re.compile(
    r'^\s+(?:(?P<person>works (?:at|for)|worked (?:at|for)|lives in|(?:just )?(?:moved|relocated) to|joined)|'
    r'(?P<org>is (?:based|headquartered|located) in))\b'
)
_NOT_SUBJECTS = word_set(
    'I It This That There He She They We You My Our Your The A An Everyone Nobody Someone Somebody What Who Why How When Where '
    'Also And But So Then Today Yesterday Tomorrow Here Please Thanks Yes No Ok Okay Hi Hey Hello'
)
# "Actually Ben lives in Rome": text.LEADING_FILLERS drops these words only before "I" or "we" (elsewhere "now" and
# "actually" can carry meaning), so before a name they are dropped here; they are never part of the name.
_DISCOURSE_LEAD = re.compile(r'^(?:Actually|Apparently|Now|Currently|In fact)[,:]?\s+')
# "my manager approved it" (but "my manager is Dana Lee" is a key-value statement about the speaker).
_MY_ROLE = re.compile(
    r'^(?:my|our)\s+(?:new\s+|old\s+|current\s+)?(?P<person>manager|boss|colleague|coworker|co-worker|teammate|team lead|lead|'
    r"supervisor|director|friend|partner|contact)\b(?!\s+(?:is|'s|are|was)\b)",
    re.IGNORECASE,
)
_THE_THING = re.compile(r'^the\s+(?:(?P<organisation>client|customer|company|vendor|supplier)|(?P<project>project))\b', re.IGNORECASE)
_DROPPED_SUBJECT = re.compile(
    r'^(?:(?P<perfect>been\s+(?:living|working|based)\b)|not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\b|'
    r'(?:a\s+)?(?:big\s+|huge\s+)fan\s+of\b|living\s+in\b|based\s+in\b|working\s+(?:on|from)\b|'
    r'(?P<plain>play\s+[a-z]+\s+(?:most|every|on|at|with|twice|once)\b|quit\s+[a-z]))',
    re.IGNORECASE,
)
_CALL_ME = re.compile(r'\b(?i:call me|calls me|i go by)\s+[A-Z]')  # "Call me Rob", but not "call me back"
_PROMOTED_ME = re.compile(
    r'^(?:[\w\'-]+\s+){1,4}?(?:(?:just|finally|recently|officially)\s+)?promoted\s+me\s+to\s+(?P<rest>.+)$', re.IGNORECASE
)
_DROPPED_EVENT = re.compile(r'^(?:(?:just|finally|already|recently|also|then)\s+)*(?P<verb>[a-z]+)\s+(?P<next>[a-z]+)\b', re.I)
_EVENT_OBJECT_START = word_set('my our the a an his her their some this that these those up back out off over down home here there')
_MOTION_VERBS = word_set('move relocate switch upgrade downgrade go travel fly drive head return transfer change migrate')
_NOT_EVENT_PARTICIPLES = word_set(
    'based located called named born married compared related given concerned stressed freaked burned burnt pumped psyched '
    'fed pissed cheesed chilled bummed messed tired excited bored scared worried interested obsessed dedicated committed'
)
_LEADING_DURATION = re.compile(rf"^(?P<d>{DURATION})[\s,]+(?P<rest>(?:I|I've|I'm|we|we've)\b.+)$", re.IGNORECASE)
_PRONOUN = re.compile(r"^(?P<person>he|she)(?:'s|'ll|'d)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Subject:
    entity: EntityRef
    text: str  # the clause in first person


@dataclass(frozen=True)
class UnclearSubject:
    phrase: str  # "he", "my manager", "the project"
    type: str  # the entity type it must refer to


def resolve_subject(clause: str, ctx: ExtractionContext, opens_turn: bool = False) -> Subject | UnclearSubject | None:
    if m := _PROMOTED_ME.match(clause):  # "they promoted me to …": about the speaker, whoever did it
        return Subject(EntityRef.me(), f'I got promoted to {m.group("rest")}')
    if unclear := _unclear_subject(clause):
        return unclear
    if _FIRST_PERSON.match(clause):
        return Subject(EntityRef.me(), clause)
    if implied := _implied_first_person(clause, opens_turn):
        return Subject(EntityRef.me(), implied)
    for known, spoken in _known_names(ctx):
        if clause.startswith(spoken) and not clause[len(spoken) : len(spoken) + 1].isalnum():
            return Subject(EntityRef(type=normalise_type(known.type), name=known.name), to_first_person(clause[len(spoken) :]))
    return _unknown_subject(clause)


def _duration_first(clause: str) -> str | None:
    """ "For the past two years I've been at Globex" → "I've been at Globex for the past two years"."""
    m = _LEADING_DURATION.match(clause)
    return f'{m.group("rest")} {m.group("d").lower()}' if m else None


def _implied_first_person(clause: str, opens_turn: bool) -> str | None:
    """Casual speech drops the subject ("been living in Dublin", "not a fan of ORMs"); a turn may open with "this is Priya";
    a favourite may be named first ("Harry Potter is my favorite book")."""
    if _CALL_ME.search(clause):
        return clause  # "please call me Maggie", "you can call me Sam": a statement about the speaker's name
    if re.match(r'^before\b[^,]{0,40}?\b(?:I|we)\s', clause, re.IGNORECASE):
        return clause  # "Before we lived in Zilverdijk": where the speaker lived before (claims.py, _lived_before)
    if moved := _duration_first(clause):
        return moved
    if m := _DROPPED_SUBJECT.match(clause):  # terse: "play chess most nights", "quit coffee"
        return ("I've " if m.group('perfect') else 'I ' if m.group('plain') else "I'm ") + clause
    if opens_turn and (m := re.match(rf'^(?i:this is)\s+(?P<rest>{PROPER}.*)$', clause)):
        return "I'm " + m.group('rest')
    return favourite_as_first_person(clause) or topicalised_as_first_person(clause) or _dropped_before_event(clause)


def _dropped_before_event(clause: str) -> str | None:
    """ "Signed the lease on Wednesday", "sold my old car": a past event told without its "I" (its object follows the verb;
    "Related question", "Based on the docs" and moods such as "stressed out" are no events)."""
    m = _DROPPED_EVENT.match(clause)
    if not m:
        return None
    verb, follower = m.group('verb').lower(), m.group('next').lower()
    if not is_past_form(verb) or verb in NON_EVENT_VERBS or verb in _NOT_EVENT_PARTICIPLES:
        return None
    moved_to = follower in ('to', 'into') and lemma(verb) in _MOTION_VERBS
    if follower not in _EVENT_OBJECT_START and not moved_to and not (verb == 'got' and is_past_form(follower)):
        return None
    return 'I ' + (clause[0].lower() + clause[1:] if clause[1:2].islower() else clause)


def _unclear_subject(clause: str) -> UnclearSubject | None:
    for pattern in (_PRONOUN, _MY_ROLE, _THE_THING):
        if m := pattern.match(clause):
            kind = next(k for k, v in m.groupdict().items() if v)
            return UnclearSubject(m.group(0), kind)
    return None


def _known_names(ctx: ExtractionContext) -> list[tuple[KnownEntity, str]]:
    """Every way the turn may name a known entity: the full name, and a person's first name when only one person has it."""
    names = [(k, k.name) for k in ctx.known_entities]
    first_names: dict[str, list[KnownEntity]] = {}
    for k in ctx.known_entities:
        if normalise_type(k.type) == 'person' and ' ' in k.name:
            first_names.setdefault(k.name.split()[0], []).append(k)
    names += [(ks[0], first) for first, ks in first_names.items() if len(ks) == 1]
    return sorted(names, key=lambda pair: len(pair[1]), reverse=True)


def _unknown_subject(clause: str) -> Subject | None:
    clause = _DISCOURSE_LEAD.sub('', clause)
    m = re.match(PROPER, clause)
    if not m or m.group(0).split()[0] in _NOT_SUBJECTS or 'I' in m.group(0).split() or not is_plausible_name(m.group(0)):
        return None
    verb = _UNKNOWN_SUBJECT_VERBS.match(clause[m.end() :])
    if not verb:
        return None
    kind = 'person' if verb.group('person') else 'organisation'
    return Subject(EntityRef(type=kind, name=m.group(0)), to_first_person(clause[m.end() :]))


def to_first_person(rest: str) -> str:
    """The predicate after a named subject, restated by the speaker: " works at X" → "I work at X", "'s plan is" → "my plan is"."""
    if rest.startswith("'s "):
        return 'my ' + rest[3:]
    tokens = rest.split()
    for i, token in enumerate(tokens[:3]):
        if token in _THIRD_TO_FIRST:
            tokens[i] = _THIRD_TO_FIRST[token]
            break
    text = 'I ' + ' '.join(tokens)
    return text.replace("I 'm", "I'm")


def names_any(text: str, ctx: ExtractionContext, entity_type: str) -> bool:
    """Whether the turn names an entity of this type from the vocabulary (then a pronoun is not left dangling)."""
    return any(normalise_type(k.type) == entity_type and re.search(rf'\b{re.escape(spoken)}\b', text) for k, spoken in _known_names(ctx))


def known_type(name: str, ctx: ExtractionContext) -> str | None:
    """The vocabulary's type for an entity named exactly so (case-insensitive), if it knows one."""
    wanted = name.casefold()
    return next((normalise_type(k.type) for k in ctx.known_entities if k.name.casefold() == wanted), None)


def candidates(ctx: ExtractionContext, entity_type: str) -> list[str]:
    return [k.name for k in ctx.known_entities if normalise_type(k.type) == entity_type]
