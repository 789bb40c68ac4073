"""Values the speaker takes back, whatever key they were stored under: "its not Dubois Hardware its Duquette Hardware",
"Fenna and Sem are 5, not 4", "correction: 32 not 31", "Joris is not self-employed anymore", "Dr. Tamsett is no longer at
Carradine College", "my sister Aiko isn't in Brenton anymore".

Stage 0 does not know what memory holds, so a retraction names the value, not the key: the reconciler replaces (or
closes) the entity's current attributes that hold it (``Revision``, ``domain/reconcile.py``). A correction's lead-in
("Small correction:", "I made a mistake before,", "I must correct something:") is peeled off first; what follows is read
as any statement, so "I work at Leeds General Infirmary, not St. Mary's" is a new employer that supersedes the old one.
"""

from __future__ import annotations

import re

from agent_memory.extraction.model import EntityRef, ExtractionContext, Revision
from agent_memory.extraction.stage0.lexicon import NOT_NAMES, SPORT_GERUNDS
from agent_memory.extraction.stage0.people import Referent, number_word
from agent_memory.extraction.stage0.preferences import DRINKS
from agent_memory.extraction.stage0.text import PROPER
from agent_memory.vocabulary import normalise_type

# "Small correction:", "A correction to something I told you last week:", "Sorry, I make mistake before.", "wait actually i
# messed up earlier,", "I must correct something:", "One thing I told wrong:", "scratch that,"
CORRECTION_LEAD = re.compile(
    r'^(?:(?:sorry|oops|oh|and|also|wait|ok|okay|actually|so|ah|hmm|no|lol|ugh|haha|right)[\s,!.]+)*'
    r'(?:(?:(?:a|one|small|quick|little|minor|tiny)\s+)*correction(?:\s+(?:on|to|about)\s+[^:]{1,80})?(?:\s*[:,.!-]+|\s+(?=\S))'
    r"|i\s+(?:made|make|have\s+made|'ve\s+made)\s+(?:a\s+)?mistake(?:\s+(?:before|earlier|last\s+time|there))?\s*[:,.!-]*"
    r'|i\s+(?:messed|mixed)\s+(?:it\s+|that\s+)?up(?:\s+(?:earlier|before))?\s*[:,.!-]*'
    r'|i\s+(?:must|need\s+to|have\s+to|should|want\s+to)\s+correct\s+(?:something|that|myself|one\s+thing)[^:,.]{0,60}[:,.]'
    r"|(?:let\s+me|i'll|i\s+will)\s+correct\s+(?:that|myself|something)\s*[:,.!-]*"
    r'|(?:one\s+thing\s+)?i\s+(?:told|said)\s+(?:you\s+)?(?:one\s+thing\s+)?wrong\s*[:,.!-]*'
    r'|i\s+(?:also\s+)?(?:say|said)\s+one\s+thing\s+wrong\s*[:,.!-]*'
    r'|scratch\s+that\s*[:,.!-]*|my\s+(?:bad|mistake)\s*[:,.!-]*'
    r'|i\s+(?:lied|got\s+(?:that|it)\s+wrong)(?:\s+(?:earlier|before|about\s+\w+))?\s*[:,.!-]*'
    r'|(?:scrap|forget|ignore)\s+(?:that|what\s+i\s+(?:said|told\s+you)(?:\s+(?:earlier|before|about\s+\w+))?)\s*[:,.!-]*)\s*',
    re.IGNORECASE,
)
_VALUE = r"[\w'.&-]+(?:\s+[\w'.&-]+){0,4}?"
_NUMBER = (
    r'(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|'
    r'eighteen|nineteen|twenty)'
)
# "its not Dubois Hardware its Duquette Hardware", "it's not Tuesday, it's Wednesday"
_NOT_X_ITS_Y = re.compile(
    rf"^(?:it'?s|its|it\s+is)?\s*not\s+(?P<old>{_VALUE})\s*[,;.]?\s+(?:it'?s|its|it\s+is|but)\s+(?P<new>{_VALUE})\s*$", re.IGNORECASE
)
# "Fenna and Sem are 5, not 4", "pickle's 7 not 6", "Mimi is 6 years, not 5", "I'm 32, not 31"
_WHO_IS_Y_NOT_X = re.compile(
    rf"^(?P<who>.{{1,60}}?)\s*(?:'s|'re|'m|\s+is|\s+are|\s+am)\s+(?:(?:actually|really|only|just)\s+)?(?P<new>{_NUMBER})"
    rf'(?:\s+(?:years?|yrs?)(?:\s+old)?)?\s*,?\s+not\s+(?P<old>{_NUMBER})\b',
    re.IGNORECASE,
)
# "gnocchi is a gerbil not a hamster", "Marmaduke is not fifteen; he is in fact seventeen"
_WHO_IS_A_Y_NOT_X = re.compile(
    r"^(?P<who>.{1,60}?)\s*(?:'s|\s+is)\s+(?:(?:actually|really)\s+)?(?:a|an)\s+(?P<new>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*,?\s+not\s+"
    r'(?:a|an)\s+(?P<old>[a-z][\w-]*(?:\s+(?!and\b|but\b)[a-z][\w-]*)?)\s*(?:[,;].*)?$',
    re.IGNORECASE,
)
# "Pickle's not a tortie, she's a calico"
_WHO_IS_NOT_A_X_BUT_A_Y = re.compile(
    r"^(?P<who>.{1,60}?)(?:'s|\s+is|\s+isn't)\s+(?:not\s+)?(?:a|an)\s+(?P<old>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*[,;]\s*"
    r"(?:(?:he|she|it)(?:'s|\s+is)|but|it's)\s+(?:(?:actually|really|in\s+fact)\s+)?(?:a|an)\s+(?P<new>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*(?:[,;].*)?$",
    re.IGNORECASE,
)
_WHO_IS_NOT_X_BUT_Y = re.compile(
    rf"^(?P<who>.{{1,60}}?)\s+is\s+not\s+(?P<old>{_NUMBER})\s*[;,.]?\s+(?:he|she|it|they)(?:'s|\s+is|\s+are)\s+"
    rf'(?:(?:in\s+fact|actually|really)\s+)?(?P<new>{_NUMBER})\b',
    re.IGNORECASE,
)
# "correction: 32 not 31", "7, not 6"
_Y_NOT_X = re.compile(rf'^(?P<new>{_NUMBER})\s*,?\s+not\s+(?P<old>{_NUMBER})\b', re.IGNORECASE)
# "Joris is not self-employed anymore", "Dr. Tamsett is no longer at Carradine College", "Aiko isn't in Brenton anymore",
# "Saskia works not in St. Josefs anymore", "I'm not vegetarian anymore"
_NO_LONGER = re.compile(
    r"^(?P<who>.{1,60}?)\s*(?:(?:'s|'re|'m|\s+is|\s+are|\s+am)\s+(?:not|no\s+longer)|\s+isn't|\s+aren't|\s+(?P<verb>works|lives)\s+not|"
    r"\s+(?:doesn't|does\s+not|don't|do\s+not|dont)\s+(?P<verb2>work|live|drink|eat|smoke|play|do|use)|"
    r'\s+(?:no\s+longer)\s+(?P<verb3>works|lives|drinks|eats|smokes|plays|does|uses|work|live|drink|eat|smoke|play|do|use))\s+'
    rf'(?:(?:working\s+)?(?:in|at|with|for|by)\s+(?:the\s+)?|(?:a|an)\s+)?(?P<old>{PROPER}|[a-z][\w-]*(?:\s+(?!any)[a-z][\w-]*)?)'
    r'\s*(?:anymore|any\s+more)?\b',
    re.IGNORECASE,
)
# "quit coffee", "I gave up gluten", "stopped eating meat", "I've given up running altogether", "i used to drink regular
# coffee all day long": a habit given up, so the liking, sport or diet is taken back
_GAVE_UP = re.compile(
    r"^(?:i\b|we\b)?(?:'ve|\s)*(?:(?:have|just|finally|recently)\s+)*(?:quit|gave\s+up|given\s+up|stopped|cut\s+out|dropped)\s+"
    r'(?:(?:drinking|eating|having|smoking|doing)\s+)?(?P<old>[a-z][\w-]*(?:\s+(?!altogether|completely|entirely|for\s+good|now)[a-z][\w-]*)?)'
    r'(?:\s+(?:altogether|completely|entirely|for\s+good|now))?\s*$'
    r"|^(?:i'm\s+|i\s+am\s+)?off\s+(?P<off>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)\s*$"
    r'|^(?:i|we)\s+used\s+to\s+(?:drink|eat|have|do|play|go)\s+(?P<habit>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)'
    r'(?:\s+(?:all\s+day(?:\s+long)?|every\s+\w+|a\s+lot|daily))?\s*$',
    re.IGNORECASE,
)
# What replaces a habit or place just given up, in the same turn: "green tea now", "Swimming now", "the doc switched me to
# decaf", "she changed in the summer to the Marienkron Clinic"
_NOW_IT_IS = re.compile(
    r"^(?:(?:but|and|so)\s+)?(?:(?:it'?s|i'?m|i\s+am|i\s+do|i\s+drink|i\s+have|just)\s+)?"
    r"(?P<new>[\w'&.-]+(?:\s+[\w'&.-]+){0,3}?)\s+(?:now|instead)(?:\s*[,;:]\s.*)?$",
    re.IGNORECASE,
)
_SWITCHED_TO = re.compile(
    r'^(?:(?:but|and|so|then)\s+)?(?:(?:i|we|he|she|they|(?:the|my|his|her)\s+\w+)\s+)?(?:has\s+|have\s+)?'
    r'(?:switched|changed|moved|went\s+over)\s+(?:(?:me|him|her|us|them|over)\s+)?'
    r'(?:(?:in|during|over)\s+the\s+\w+\s+|(?:last|this)\s+\w+\s+)?to\s+(?:the\s+)?'
    r"(?P<new>[\w'&.-]+(?:\s+[\w'&.-]+){0,4}?)"
    r'(?:\s+(?:after|because|since|for|when|as|at|in|on|from|which|and|but|last|this)\b.*|\s*[,;:]\s.*)?$',
    re.IGNORECASE,
)
_DIETS = frozenset({'vegetarian', 'vegan', 'pescatarian', 'pescetarian', 'gluten-free', 'keto', 'teetotal'})
_HABIT_VERBS = {'work': 'employer', 'works': 'employer', 'live': 'location', 'lives': 'location'}
_NOT_HABITS = frozenset({'my', 'the', 'a', 'it', 'that', 'this', 'working', 'work', 'there', 'here', 'by', 'in', 'at', 'for'})
_ANYMORE = re.compile(r'\b(?:anymore|any\s+more|no\s+longer)\b', re.IGNORECASE)
_FIRST_PERSON = re.compile(r"^(?:i|i'm|i\s+am|we|we're|we\s+are)$", re.IGNORECASE)
_PRONOUNS = {'he': 'he', 'she': 'she', "he's": 'he', "she's": 'she'}
_VAGUE_OLD = frozenset(
    {'anymore', 'sure', 'that', 'this', 'it', 'there', 'here', 'so', 'too', 'very', 'really', 'the', 'a', 'an', 'fine', 'ok'}
)


def without_lead(sentence: str) -> tuple[str, bool]:
    """The sentence without a correction's lead-in, and whether it had one."""
    m = CORRECTION_LEAD.match(sentence)
    if (
        not m
        or not m.group(0).strip()
        or not re.search(r'correct|mistake|messed|mixed|wrong|scratch|bad|lied|scrap|forget|ignore', m.group(0), re.I)
    ):
        return sentence, False
    rest = sentence[m.end() :]
    if len(rest.split()) < 3:  # "Correction: Ovar.": a bare value corrects the sentence before (stage0/turn.py)
        return sentence, False
    return rest, True


def find_revisions(clause: str, ctx: ExtractionContext, referents: list[Referent]) -> list[Revision]:
    """The values a clause takes back, each bound to whom it was about."""
    text = clause.strip().rstrip('!.').strip()
    if m := _NOT_X_ITS_Y.match(text):
        return [Revision(entity=EntityRef.me(), old=m.group('old').strip(), new=m.group('new').strip())]
    if m := _Y_NOT_X.match(text):
        return [Revision(entity=EntityRef.me(), old=number_word(m.group('old')), new=number_word(m.group('new')))]
    if m := _WHO_IS_Y_NOT_X.match(text):
        return [
            Revision(entity=who, old=number_word(m.group('old')), new=number_word(m.group('new')))
            for who in _who(m.group('who'), ctx, referents)
        ]
    if m := _WHO_IS_A_Y_NOT_X.match(text):
        return _revised(m, ctx, referents)
    if (m := _GAVE_UP.match(text)) and (old := m.group('old') or m.group('habit') or m.group('off')).split()[0].lower() not in _NOT_HABITS:
        return [Revision(entity=EntityRef.me(), old=old, key=habit_key(old))]
    if (m := _NO_LONGER.match(text)) and _ANYMORE.search(text):
        old = m.group('old').strip()
        if old.lower() in _VAGUE_OLD or old.lower() in NOT_NAMES - {'vegan', 'vegetarian'}:
            return []
        verb = m.group('verb') or m.group('verb2') or m.group('verb3') or ''
        key = _HABIT_VERBS.get(verb.lower()) or habit_key(old)
        return [Revision(entity=who, old=old, key=key) for who in _who(m.group('who'), ctx, referents)]
    return []


def habit_key(value: str) -> str | None:
    """The key a habit's value is kept under when its kind shows: a sport, a drink, a diet."""
    folded = value.casefold().strip()
    if folded in SPORT_GERUNDS:
        return 'plays'
    if re.fullmatch(DRINKS, folded):
        return 'likes'
    return 'diet' if folded in _DIETS else None


def replacement(clause: str) -> str | None:
    """What a clause names as the new value of something given up just before ("green tea now")."""
    text = clause.strip().rstrip('!.').strip()
    m = _NOW_IT_IS.match(text) or _SWITCHED_TO.match(text)
    if not m:
        return None
    new = m.group('new').strip()
    return None if new.split()[0].casefold() in _VAGUE_OLD | _NOT_HABITS | {'not', 'no', 'here', 'home'} else new


def sentence_revisions(sentence: str, ctx: ExtractionContext, referents: list[Referent]) -> list[Revision]:
    """A correction spread over a sentence's clauses: "Marmaduke is not fifteen; he is in fact seventeen", "Pickle's not a
    tortie, she's a calico"."""
    text = sentence.strip().rstrip('!.')
    m = _WHO_IS_NOT_X_BUT_Y.match(text) or _WHO_IS_NOT_A_X_BUT_A_Y.match(text)
    return _revised(m, ctx, referents) if m else []


def _revised(m: re.Match[str], ctx: ExtractionContext, referents: list[Referent]) -> list[Revision]:
    old, new = number_word(m.group('old')), number_word(m.group('new'))
    return [Revision(entity=who, old=old, new=new) for who in _who(m.group('who'), ctx, referents)]


def _who(phrase: str, ctx: ExtractionContext, referents: list[Referent]) -> list[EntityRef]:
    """Whom the subject of a retraction names: the speaker, someone the turn or the vocabulary knows, or a pronoun's
    referent; a name nobody introduced is taken as a person of that name. Nothing for anything else."""
    phrase = re.sub(
        r'^(?:(?:and|also|so|oh|but|ok|okay|wait|sorry|lol|ugh|oops|actually|hmm|right|no)[\s,!.]+)+', '', phrase.strip(), flags=re.I
    ).strip(' ,')
    if _FIRST_PERSON.match(phrase):
        return [EntityRef.me()]
    if phrase.lower() in _PRONOUNS:
        wanted = _PRONOUNS[phrase.lower()]
        fitting = [r for r in referents if r.pronoun in (None, wanted)]
        return [fitting[-1].entity] if fitting else []
    found: list[EntityRef] = []
    for part in re.split(r'\s*(?:,|\band\b|&)\s*', re.sub(r"'s$", '', phrase)):
        name = re.sub(r'^(?:my|our)\s+\w+\s+', '', part.strip())
        name = re.sub(r'^(?:Dr|Mr|Mrs|Ms|Prof)\.?\s+', '', name)
        entity = _known(name, ctx, referents)
        if entity is None:
            return []
        found.append(entity)
    return found


def _known(name: str, ctx: ExtractionContext, referents: list[Referent]) -> EntityRef | None:
    folded = name.casefold()
    for referent in reversed(referents):
        if referent.entity.name.casefold() in (folded, folded.split()[0] if folded else ''):
            return referent.entity
    for known in ctx.known_entities:
        spoken = known.name.casefold()
        if folded and (spoken == folded or spoken.split()[-1] == folded or spoken.split()[0] == folded):
            return EntityRef(type=normalise_type(known.type), name=known.name)
    if re.fullmatch(PROPER, name) and name.split()[0] not in ('I', 'It', 'This', 'That', 'There', 'He', 'She', 'They', 'We', 'You'):
        return EntityRef(type='person', name=name)
    return None
