"""Reading one sentence of a user turn into findings: attributes, invalidations, events and uncertainties."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field, replace

from agent_memory.extraction.model import EntityRef, ExtractedRelation, ExtractedUncertainty, ExtractionContext, Invalidation, Revision
from agent_memory.extraction.stage0.actions import Event, find_event
from agent_memory.extraction.stage0.claim import Claim
from agent_memory.extraction.stage0.claims import find_claims
from agent_memory.extraction.stage0.dates import TimeRef, find_time
from agent_memory.extraction.stage0.hedges import SMALL_TALK, hedge_in, hedged
from agent_memory.extraction.stage0.lexicon import word_set
from agent_memory.extraction.stage0.negations import find_invalidations
from agent_memory.extraction.stage0.people import Referent, introduce, pet_kind, pet_named, pronoun_subject, unnamed_pet
from agent_memory.extraction.stage0.retractions import find_revisions, habit_key, replacement, sentence_revisions
from agent_memory.extraction.stage0.signals import is_hypothetical, opens_hypothesis, tense
from agent_memory.extraction.stage0.subjects import (
    Subject,
    UnclearSubject,
    candidates,
    known_type,
    names_any,
    resolve_subject,
    to_first_person,
)
from agent_memory.extraction.stage0.text import PROPER, clip, is_plausible_name, split_clauses, squash, strip_fillers
from agent_memory.extraction.stage0.titles import HONORIFIC, honorific
from agent_memory.vocabulary import normalise_type

CONFIDENT = 0.9
MAX_CLAUSES = 40  # per sentence: "… and I … and I …" 3,000 times over is not a statement worth reading clause by clause
_LEAVING = frozenset({'leave', 'quit'})
# Verbs of an activity kept up over time: in a period of the past ("growing up I played the cello") they are habits.
_PASTIMES = word_set(
    'play practise practice sing dance paint draw swim run ride cook bake collect read write study train teach skate surf ski '
    'hike climb fish hunt act perform compete go spend watch listen volunteer coach knit sew garden'
)
_FIRST_PERSON_WORD = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|(?i:me|my|we|we're|we've|we'll|our|us))\b")
_USED_TO_BUT = re.compile(r'^(?P<head>(?:i|we)\s+used\s+to\s+\w.{0,200}?),?\s+but\s+(?P<tail>\w.*)$', re.IGNORECASE)
_INSTEAD = re.compile(r"\band\s+(?:i\s+)?(?:take|drink|have|eat|do|play)\s+(?P<new>[\w' -]{2,40}?)\s+instead\b", re.IGNORECASE)
# "I am 71 and live in Hexham", "Graham lives in Edinburgh and works as an actuary", "I am vegetarian, and also intolerant
# to the lactose", "I have coeliac disease and keep to a strictly gluten-free diet"
_AND_THEN = re.compile(
    r'^(?P<head>(?P<subject>I|we|he|she|(?!(?:My|Our|The|This|That|It|There)\b)(?-i:[A-Z][\w-]+))\s+(?!and\b)[^,;]{1,80}?)'
    r'\s*,?\s+and\s+(?:also\s+)?'
    r'(?:(?P<state>allergic|intolerant)\b|(?=(?:live|lives|work|works|teach|teaches|keep|keeps|speak|speaks|study|studies)\b))'
    r'(?P<rest>.*)$',
    re.IGNORECASE,
)
_BE = {'i': 'am', 'we': 'are'}
_TERSE_MY = re.compile(r"^(?=new\s+(?:job|e-?mail|address|number)\s+is\b|home(?:'s|\s+is)\s)", re.IGNORECASE)
_REPORTED = re.compile(
    r'^(?:(?-i:[A-Z][\w-]+)|(?:my|our)\s+\w+|he|she)\s+(?:says|said|thinks|told\s+me|reminded\s+me)\s+(?:that\s+)?'
    r"(?P<rest>(?-i:[A-Z][\w-]+)\s+(?:is|'s|was|has|lives|works)\b.*)$",
    re.IGNORECASE,
)
_SMALL_TALK_PLANS = re.compile(
    r'\b(?:get back|be back|come back|talk|speak|chat|see you|catch up|check back|follow up|let you know)\b', re.I
)


@dataclass(frozen=True)
class Finding:
    """An attribute the turn states about an entity, with its validity from the clause's time phrase."""

    entity: EntityRef
    key: str
    value: str
    category: str
    valid_from: dt.date | None = None
    valid_until: dt.date | None = None
    tentative: bool = False
    confidence: float = CONFIDENT


@dataclass(frozen=True)
class Happening:
    actor: EntityRef
    event: Event
    summary: str
    occurred_at: dt.date | None


@dataclass
class Reading:
    findings: list[Finding] = field(default_factory=list)
    invalidations: list[Invalidation] = field(default_factory=list)
    happenings: list[Happening] = field(default_factory=list)
    uncertainties: list[ExtractedUncertainty] = field(default_factory=list)
    links: list[ExtractedRelation] = field(default_factory=list)  # relations that are not the shadow of an attribute
    revisions: list[Revision] = field(default_factory=list)  # values taken back, whatever their key

    def extend(self, other: Reading) -> None:
        self.links += other.links
        self.revisions += other.revisions
        self.findings += other.findings
        self.invalidations += other.invalidations
        self.happenings += other.happenings
        self.uncertainties += other.uncertainties


@dataclass(frozen=True)
class Turn:
    """What every sentence reader needs besides the sentence; ``referents`` grows as the turn introduces people."""

    text: str
    ctx: ExtractionContext
    referents: list[Referent] = field(default_factory=list)
    given_up: list[Revision] = field(default_factory=list)  # values taken back earlier in the turn, not yet replaced
    unnamed_pets: list[str] = field(default_factory=list)  # "I adopted a kitten": its kind, until a clause names it

    @property
    def today(self) -> dt.date:
        return self.ctx.observed_at.date()


def read_sentence(text: str, turn: Turn, opens_turn: bool = False) -> Reading:
    introduced, text = _here(text)
    if revised := sentence_revisions(text, turn.ctx, turn.referents):
        return Reading(revisions=revised)
    reading = Reading(findings=[*introduced, *_email_given(text)])
    text = _ASIDE.sub(lambda m: m.group(0) if len(m.group(1).split()) < 4 else '', text)  # "(like, OBSESSED, he …)"
    conditional = hedging = False
    leading_cue = None  # "Fingers crossed, we move to Porto in the spring": a hedge standing alone opens the sentence
    for i, clause in enumerate(split_clauses(text)[:MAX_CLAUSES]):
        clause = strip_fillers(clause)
        cue = hedge_in(clause) or leading_cue
        if not conditional and cue:  # "I might be moving to Manchester": open, not a fact
            if i == 0 and len(clause.split()) < 4 and clause.strip(' ,.!').casefold() == cue.casefold():
                leading_cue = cue
                continue
            if not hedging and _about_someone(clause, turn):
                reading.uncertainties.append(hedged(clause, cue, named_entities(turn)))
            hedging = True
            continue
        if conditional or is_hypothetical(clause):
            conditional = opens_hypothesis(clause)
            continue
        reading.extend(_on_the_same_day(read_clause(clause, turn, opens_turn and i == 0), reading, clause, turn))
    return _without_the_leaving(reading)


_ASIDE = re.compile(r'\s*\(([^()]{0,300})\)')  # a parenthetical aside of four words or more is left out
_MY_EMAIL = re.compile(
    r'^(?:(?:also|and|so|oh|btw|ps)[\s,]+)*(?:my\s+(?:(?:work|personal|private|new|main)\s+)?e-?mail\b|(?:my\s+)?new\s+(?:one\s+)?is\b)',
    re.I,
)
_EMAIL_ADDRESS = re.compile(r'[\w.+-]+@[\w-]+(?:\.[\w-]+)+')


def _email_given(sentence: str) -> list[Finding]:
    """ "My e-mail, if you need it for the reminders, is m@example.com", "New is m@example.com": the address, whatever is
    said between."""
    if not _MY_EMAIL.match(sentence) or not (m := _EMAIL_ADDRESS.search(sentence)):
        return []
    return [Finding(EntityRef.me(), 'email', m.group(0).rstrip('.'), 'identity')]


# "Prof. Halima Osei-Larkin here; I chair …", "Dr. Whitcombe here — Eleanor Whitcombe.", "name's Tomasz": the speaker
# saying who is speaking
_NOT_SPEAKERS = frozenset({'It', 'This', 'That', 'There', 'Everyone', 'Everybody', 'Nobody', 'Someone', 'Anyone', 'Nothing'})
_HERE = re.compile(
    rf'^(?:{HONORIFIC}\s+)?(?P<name>{PROPER})\s+here\b(?:\s*[—–-]+\s*(?P<full>{PROPER})\s*$|\s*(?:[;:,.!]|$))'
    rf"|^(?i:name(?:'s|\s+is))\s+(?P<terse>{PROPER})\s*$"
)


def _here(sentence: str) -> tuple[list[Finding], str]:
    """The speaker's name (and honorific) when the sentence opens by saying who is speaking, and the rest to read."""
    text = sentence.strip().rstrip('.!')
    m = _HERE.match(text)
    name = (m.group('full') or m.group('name') or m.group('terse')) if m else None
    if m is None or name is None or name.split()[0] in _NOT_SPEAKERS or not is_plausible_name(name):
        return [], sentence
    if m.group('name') and not m.group('title') and len(name.split()) < 2:
        return [], sentence  # "Same here!", "Looky here": one word before "here" is no name said
    title = [Finding(EntityRef.me(), 'title', honorific(m.group('title')), 'identity')] if m.group('title') else []
    return [*title, Finding(EntityRef.me(), 'name', name, 'identity')], text[m.end() :].strip()


def _about_someone(clause: str, turn: Turn) -> bool:
    """A hedge worth an open unknown is about the speaker or someone named ("maybe we can hang out" is not)."""
    if len(clause.split()) < 4 or SMALL_TALK.search(clause):
        return False
    if re.match(r'^(?:might|may|maybe|probably|possibly|thinking)\b', clause, re.IGNORECASE):
        return True  # terse: "might go freelance after the reorg" is the speaker's
    return bool(_FIRST_PERSON_WORD.search(clause)) or any(n in clause for n in named_entities(turn))


def named_entities(turn: Turn) -> dict[str, EntityRef]:
    """The people (and pets, organisations …) a clause may name: those the turn introduced and the vocabulary's."""
    named = {k.name: EntityRef(type=normalise_type(k.type), name=k.name) for k in turn.ctx.known_entities}
    return named | {r.entity.name: r.entity for r in turn.referents}


def _on_the_same_day(clause: Reading, before: Reading, text: str, turn: Turn) -> Reading:
    """ "I met them yesterday, and then I sent them the quote": a past event told next in the same sentence, with no
    time of its own, happened on the day of the dated event before it."""
    dated = next((h.occurred_at for h in reversed(before.happenings) if h.occurred_at), None)
    if dated is None or dated > turn.today or find_time(text, turn.today, tense(text)):
        return clause
    clause.happenings = [replace(h, occurred_at=dated) if h.occurred_at is None else h for h in clause.happenings]
    return clause


def _without_the_leaving(reading: Reading) -> Reading:
    """ "I no longer work at Quantlytics, I left last month": the leaving is the invalidation (a state change), not
    also an event with nothing left of it but its verb."""
    if any(v.key == 'employer' for v in reading.invalidations):
        reading.happenings = [h for h in reading.happenings if not (h.event.verb in _LEAVING and h.event.object_text is None)]
    return reading


def read_clause(clause: str, turn: Turn, opens_turn: bool = False) -> Reading:
    if m := _REPORTED.match(clause):  # "Dolores says Buster is 6": what someone else says is said
        clause = m.group('rest')
    clause = _TERSE_MY.sub('my ', clause, count=1)  # "new job is at Brightloom Inc.": the speaker's, "my" dropped
    if m := _AND_THEN.match(clause):  # "I am 71 and live in Hexham": the second verb's subject is the first's
        head = read_clause(m.group('head'), turn, opens_turn)
        state = f'{_BE.get(m.group("subject").lower(), "is")} {m.group("state")}' if m.group('state') else ''
        head.extend(read_clause(squash(f'{m.group("subject")} {state} {m.group("rest")}'), turn))
        return head
    if m := _USED_TO_BUT.match(clause):  # "i used to drink regular coffee but the doc switched me to decaf": two clauses
        head = read_clause(m.group('head'), turn, opens_turn)
        head.extend(read_clause(m.group('tail'), turn))
        return head
    when = find_time(clause, turn.today, tense(clause))
    text = strip_fillers(squash(clause[: when.start] + ' ' + clause[when.end :])) if when else clause
    revisions = find_revisions(text, turn.ctx, turn.referents)
    turn.referents.extend(Referent(r.entity, None) for r in revisions if not r.entity.is_self)
    if any(r.new for r in revisions):  # "Mimi is 6, not 5": the correction is all the clause says
        return Reading(revisions=revisions)
    reading = _read_clause(clause, text, when, turn, opens_turn)
    if revisions and not reading.invalidations:  # "Joris is not self-employed anymore": the value, whatever its key
        taken_back = {r.old.casefold() for r in revisions}
        reading.findings = [f for f in reading.findings if f.value.casefold() not in taken_back]
        reading.revisions += revisions
        turn.given_up.extend(r for r in revisions if r.new is None)
    elif reading.invalidations:  # "Joris isn't at Brenton Lumber anymore" (his employer): what a replacement replaces
        turn.given_up.extend(Revision(entity=v.entity, old=v.value, key=v.key) for v in reading.invalidations if v.value)
    elif not revisions and not reading.findings and turn.given_up and (new := replacement(clause)):
        return _replacing(turn.given_up.pop(), new) or reading
    if turn.given_up and not reading.findings and (m := _INSTEAD.search(text)):  # "… and take decaf Earl Grey instead"
        reading.extend(_replacing(turn.given_up.pop(), m.group('new')) or Reading())
    return reading


def _replacing(given_up: Revision, new: str) -> Reading | None:
    """ "quit coffee. green tea now.", "Saskia works not in St. Josefs anymore, she changed to the Marienkron Clinic": the
    new value of what was given up. Stated outright when its kind matches the key; otherwise it replaces whatever memory
    holds for the old value, and only a name can do that."""
    if given_up.key in ('employer', 'location') and re.fullmatch(PROPER, new):
        return Reading(findings=[Finding(given_up.entity, given_up.key, new, 'identity')])
    if given_up.key is not None and habit_key(new) == given_up.key:
        return Reading(findings=[Finding(given_up.entity, given_up.key, new.lower(), 'identity')])
    if given_up.key is None and re.fullmatch(PROPER, new):
        return Reading(revisions=[given_up.model_copy(update={'new': new})])
    return None


def _read_clause(clause: str, text: str, when: TimeRef | None, turn: Turn, opens_turn: bool) -> Reading:
    if introduced := _introduction(text, when, turn):
        return introduced
    if said := pronoun_subject(text, turn.referents):
        return _about(*said, when, turn)
    subject = resolve_subject(text, turn.ctx, opens_turn)
    if subject is None:
        return Reading()
    if isinstance(subject, Subject) and not subject.entity.is_self:
        turn.referents.append(Referent(subject.entity, None))  # "Saskia changed jobs, she …": the one just named
    if isinstance(subject, UnclearSubject):
        return _unclear(subject, text, turn)
    reading = _statements(subject, text, when, turn)
    if when and when.habitual:  # "Back in the day I played bass" was a pastime, "as a kid I broke my arm" one event
        reading.happenings = [h for h in reading.happenings if h.event.verb not in _PASTIMES]
    if when and not (reading.findings or reading.happenings or reading.invalidations):
        reading = _date_as_value(clause, turn, opens_turn) or reading
    if when and when.vague and (reading.findings or reading.happenings or reading.invalidations or _reports_plan(subject, text)):
        reading.uncertainties.append(
            ExtractedUncertainty(
                about=clip(f'when: "{text}"', 500),
                reason=clip(f"'{when.phrase}' cannot be resolved to a date", 1024),
                kind='unresolved_time',
            )
        )
    return reading


def _introduction(text: str, when: TimeRef | None, turn: Turn) -> Reading | None:
    """ "my sister Ada lives in Toronto": the relation, a pet's kind, and what the rest of the clause says of them."""
    pending = turn.unnamed_pets[-1] if turn.unnamed_pets else None
    found = (pet_named(text, pending, EntityRef.me()) if pending else None) or introduce(text, EntityRef.me())
    if found is None:
        turn.unnamed_pets.extend(filter(None, [unnamed_pet(text)]))
        return None
    turn.unnamed_pets.clear()
    turn.referents.extend(found.referents)
    reading = Reading(findings=[Finding(a.entity, a.key, a.value, a.category or 'identity') for a in found.attributes])
    reading.links += found.relations
    if found.rest:
        reading.extend(_about(found.referents[-1].entity, found.rest, when, turn))
    if found.before:
        reading.extend(_read_clause(found.before, found.before, when, turn, opens_turn=False))
        reading.findings += _living_together(found.before, found.relations)
    return reading


# "I live in Ambleworth with my wife, …", "we live in Mt. Ferrin, me and my wife Dolores"
_LIVE_WITH = re.compile(rf'^(?:i|we)\s+(?:\w+\s+)?live\s+in\s+(?P<place>{PROPER})\b[^.;]{{0,30}}\b(?:with|and)$', re.IGNORECASE)
_HOUSEHOLD = frozenset({'wife', 'husband', 'partner'})


def _living_together(before: str, relations: list[ExtractedRelation]) -> list[Finding]:
    """A spouse or partner named as living with the speaker lives where the speaker says they live."""
    m = _LIVE_WITH.match(before.strip(' ,'))
    return [Finding(r.object, 'location', m.group('place'), 'identity') for r in relations if m and r.label in _HOUSEHOLD]


def _about(entity: EntityRef, predicate: str, when: TimeRef | None, turn: Turn) -> Reading:
    """What a third-person predicate ("is an architect", "lives in Toronto") says of someone the turn introduced."""
    kind = [Finding(a.entity, a.key, a.value, a.category or 'identity') for a in pet_kind(predicate, entity)]
    reading = _statements(Subject(entity, to_first_person(' ' + predicate)), predicate, when, turn)
    reading.findings = kind + [f for f in reading.findings if not (kind and f.key == 'occupation')]
    reading.happenings = []  # what they did is told elsewhere too vaguely to pin on them (precision first)
    return reading


def _date_as_value(clause: str, turn: Turn, opens_turn: bool) -> Reading | None:
    """ "My birthday is March 3rd": the time phrase is the value itself, so read the clause with it left in."""
    subject = resolve_subject(clause, turn.ctx, opens_turn)
    if not isinstance(subject, Subject):
        return None
    reading = _statements(subject, clause, None, turn)
    return reading if reading.findings else None


def _statements(subject: Subject, text: str, when: TimeRef | None, turn: Turn) -> Reading:
    entity = subject.entity
    negated = find_invalidations(subject.text)
    if negated:
        return Reading(invalidations=[Invalidation(entity=entity, key=k, value=v) for k, v in negated])
    claims = find_claims(subject.text, entity.is_self)
    if claims:
        return _with_known_targets(Reading(findings=[_dated(entity, c, when) for c in claims]), turn.ctx)
    event = find_event(subject.text, future_date=bool(when and when.date and when.date > turn.today))
    if event is None:
        return Reading()
    return Reading(happenings=[Happening(entity, event, clip(text, 1024), when.date if when else None)])


def _with_known_targets(reading: Reading, ctx: ExtractionContext) -> Reading:
    """ "Omar joined Beacon": when the vocabulary knows Beacon as a project, that is a works_on link, not an employer."""
    for finding in list(reading.findings):
        known = known_type(finding.value, ctx) if finding.key == 'employer' else None
        if known and known != 'organisation':
            reading.findings.remove(finding)
            if known == 'project':
                target = EntityRef(type='project', name=finding.value)
                reading.links.append(ExtractedRelation(subject=finding.entity, label='works_on', object=target, category='knowledge'))
    return reading


def _dated(entity: EntityRef, claim: Claim, when: TimeRef | None) -> Finding:
    finding = Finding(entity=entity, key=claim.key, value=claim.value, category=claim.category(entity.type))
    if when is None or when.date is None:
        return finding
    if when.relation == 'until':
        return replace(finding, valid_until=when.date)
    if when.relation == 'since' or claim.change:
        return replace(finding, valid_from=when.date)
    return finding


def _reports_plan(subject: Subject, text: str) -> bool:
    """A first-person event or plan with no extractable fact still deserves a note that its time is unknown."""
    return subject.entity.is_self and len(text.split()) > 2 and not _SMALL_TALK_PLANS.search(text)


def _unclear(subject: UnclearSubject, text: str, turn: Turn) -> Reading:
    in_scope = candidates(turn.ctx, subject.type)
    predicate = text[len(subject.phrase) :].split()
    if len(in_scope) < 2 or names_any(turn.text, turn.ctx, subject.type) or len(predicate) < 2:
        return Reading()
    shown = ', '.join(in_scope[:5]) + (', …' if len(in_scope) > 5 else '')
    return Reading(
        uncertainties=[
            ExtractedUncertainty(
                about=clip(f'who "{subject.phrase}" refers to in "{text}"', 500),
                reason=clip(f'{len(in_scope)} {subject.type} entities are in scope ({shown}) and the turn names none of them', 1024),
                kind='ambiguous_reference',
            )
        ]
    )
