"""What a question asks for: whose (the asker, someone named, someone related to either) and which fact (the attribute
keys that answer it). Pure; /chat uses it to look the answer up (tier 1) and the extractive composer to decide whether
what memory holds answers the question at all (CONTRACT §7.1: answer what was asked, or say memory holds nothing).

"What is the name of my dog?" asks for the entity the asker's ``pet`` relation leads to (a dog); "Where does my sister
live?" for the ``location`` of the asker's sister; "What plan is Bob on?" for Bob's ``plan``; "How old is Biscuit?" for
Biscuit's ``age``. A question none of these shapes fits has no address: only a passage can answer it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent_memory.extraction.stage0.lexicon import word_set
from agent_memory.extraction.stage0.people import BREEDS, PERSON_RELATIONS, SPECIES

PET_KEYS = frozenset({'breed', 'species'})
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|am\s+i|we|us|our|ours|we're|we've)\b", re.IGNORECASE)
_RELATIVE_WORDS = sorted(
    [*PERSON_RELATIONS, *SPECIES, *BREEDS, 'pet', 'pets', 'kids', 'children', 'son', 'daughter'], key=len, reverse=True
)
_RELATIVE = '|'.join(re.escape(w).replace(r'\ ', r'\s+') for w in _RELATIVE_WORDS)
# "my sister", "my dog's", "our corgi"; "Bob's manager"
_MY_RELATIVE = re.compile(rf'\b(?:my|our)\s+(?:(?:older|younger|little|big|best|new|eldest|youngest)\s+)?(?P<rel>{_RELATIVE})s?\b', re.I)
_NAMED_RELATIVE = re.compile(
    rf"\b(?P<owner>(?-i:[A-Z][\w-]+))['’]s\s+(?:(?:second|first|new|other|older|younger|little|big|eldest|youngest)\s+)?(?P<rel>{_RELATIVE})s?\b",
    re.I,
)
# (keys, cue): the first cue that matches names the keys that answer; order matters ("where … work" before "where")
_KEYS: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = tuple(
    (frozenset(keys.split()), re.compile(cue, re.IGNORECASE))
    for keys, cue in (
        ('preferred_name name', r'\bcall(?:s|ed)?\s+me\b|\bnickname\b|\bgo\s+by\b|\bbe\s+called\b|\bshort\s+name\b|'
                                r'\bname\b.*\b(?:use|call)\b.*\bme\b'),
        ('breed', r'\bbreed\b|\bwhat\s+(?:kind|type|sort)\s+of\s+(?:dog|cat|rabbit)\b'),
        ('species', r'\bwhat\s+(?:kind|type|sort)\s+of\s+(?:animal|pet)\b|\bspecies\b|\bwhat\s+(?:animal|pet)\b'),
        ('allergy', r'\ballerg'),
        ('diet', r'\bdiet\b|\bvegetarian\b|\bvegan\b|\bpescatarian\b|\b(?:eat|eats)\s+meat\b|\b(?:i|we)\s+eat\b'),
        ('email', r'\be-?mails?\b'),
        ('language', r'\blanguages?\b|\bspeaks?\b'),
        ('nationality', r'\bnationality\b|\bcitizen'),
        ('plan', r'\bplan\b|\btier\b|\bsubscription\b'),
        ('studies', r'\bstud(?:y|ies|ying)\b|\bcourse\b|\bdegree\b|\bmajor\b|\b(?:grad\s+)?school\b|\bcollege\b|\buniversity\b'),
        ('moved_from', r'\bmov(?:e|ed|ing)\s+(?:here\s+)?from\b|\bbefore\b.*\blive|\blived?\b.*\bbefore\b|\bused\s+to\s+live|'
                       r'\bprevious(?:ly)?\b.*\blive|\b(?:leave|left)\b.*\bwhen\b.*\bcame\b'),
        ('hometown', r'\bhometown\b|\bwhere\b.*\b(?:from|grow\s+up|grew\s+up|born)\b'),
        ('employer company workplace',
         r'\bwhere\b.*\bwork|\bemploy|\bcompany\b|\bfirm\b|\binstitution\b|\bwho\b.*\bwork(?:s|ing)?\s+for\b|\bworkplace\b|'
         r'\battached\s+to\b|'
         r'\bwhich\s+\w+\b.*\bwork(?:s|ing)?\b|\bwork(?:s|ing)?\s+for\b'),
        ('occupation title', r'\bjob\b|\boccupation\b|\bprofession\b|\bcareer\b|\btrade\b|\bwork\s+as\b|\bfor\s+a\s+living\b|'
                              r'\bwhat\b.*\b(?:do|does)\b.*\bdo\b|\bwhat\b.*\bteach|\brole\b|\bposition\b|\bspecialty\b'),
        ('location city lives_in residence',
         r'\bwhere\b.*\b(?:live|living|based|stay|reside)|\bwhich\s+(?:city|town|country)\b|\bwhat\s+(?:city|town)\b|'
         r'\bhome\s*town\b|\bmoved\s+to\b|\b(?:town|city|country|place)\b.*\bliv(?:e|es|ing)\b'),
        ('age', r'\bhow\s+old\b|\bage\b|\bbirthday\b'),
        ('title', r'\btitle\b|\bhonorific\b|\baddress(?:ed)?\s+(?:me|him|her)\s+as\b'),
        ('dislikes', r"\bhates?\b|\bdislikes?\b|\bcan'?t\s+stand\b|\bnot\s+like\b"),
        ('plays likes', r'\bplay\b|\bsports?\b|\bhobb(?:y|ies)\b'),
        ('likes plays preference', r"\blikes?\b|\bloves?\b|\benjoys?\b|\bfavou?rite\b|\bdrink\b|"
                                   r"\b(?:am|are|is|'m|'re)\s+(?:really\s+)?into\b"),
    )
)  # fmt: skip
_UNKNOWN_RELATIVE = re.compile(
    r"\b(?:my|our)\s+(?P<rel>[a-z]+)(?:['’]s\s+name\b|\s+called\b)|\bname\s+of\s+(?:my|our)\s+(?P<rel2>[a-z]+)", re.I
)
_ORDINAL = re.compile(rf'\b(?:second|third|other|another|new|next|youngest|eldest|oldest|older|younger)\s+(?:{_RELATIVE})', re.I)
_SINGULAR_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|I'm|I've)\b", re.IGNORECASE)
_WITH_ME = re.compile(r'\b(?:my|our)\s+\w+\s+and\s+(?:i|me)\b', re.IGNORECASE)
_REPORT_TO = re.compile(r'\b(?:i|me)\s+reports?\s+to\b|\bi\s+report\s+to\b', re.IGNORECASE)
_NAME_ASKED = re.compile(r'\bname\b|\bcalled\b|\bwho\s+is\b|\bwho\'s\b', re.IGNORECASE)
_QUESTION_WORDS = word_set(
    'What Whats Where When Who Whom Whose Why How Which Is Are Am Was Were Do Does Did Can Could Would Will Should Remind Tell '
    'I My Me The A An And Or But Please Hey Hi Ok Okay Oh So In On At For From With To Our We Us Now Then'
)
_WORD_OR_GAP = re.compile(r"(?P<word>[^\W\d_][\w'’-]*)\s*|[^\w\s]+\s*|\d\w*\s*")  # a word and its space, or a stop


@dataclass(frozen=True)
class Asked:
    """Whose fact a question asks for and which keys answer it (empty ``keys`` with ``wants_name``: the entity itself)."""

    first_person: bool
    names: tuple[str, ...]  # people (or pets) the question names, capitalised as asked
    relation: str | None  # "sister", "dog": the relation word the asked-about entity is reached by
    owner: str | None  # who the relation starts from: None for the asker, else a name ("Bob's manager")
    keys: frozenset[str] = field(default_factory=frozenset)
    wants_name: bool = False
    places: tuple[str, ...] = ()  # names the question sets as a condition ("in Shenport", "at Acme") an answer must meet
    one_of_several: bool = False  # "Keiko's second cat", "my older brother": not simply the one memory knows
    cue: str = ''  # the words that named the keys ("favorite", "where … live")
    first_person_is_plural: bool = False  # only "we", "us", "our": the asker's group, not the asker alone

    @property
    def addressed(self) -> bool:
        """Whether the question names a fact memory can hold (else only a passage can answer it)."""
        return bool(self.keys) or (self.wants_name and self.relation is not None)


def asked(question: str) -> Asked:
    text = ' '.join(question.split())
    relation, owner = None, None
    keys, said = next(((keys, m.group(0)) for keys, cue in _KEYS if (m := cue.search(text))), (frozenset(), ''))
    if _WITH_ME.search(text) or 'preferred_name' in keys:
        pass  # "my wife and I", "what do my colleagues call me": about the asker
    elif m := _MY_RELATIVE.search(text):
        relation = _singular(m.group('rel'))
    elif m := _NAMED_RELATIVE.search(text):
        relation, owner = _singular(m.group('rel')), m.group('owner')
    elif m := _UNKNOWN_RELATIVE.search(text):
        relation = (m.group('rel') or m.group('rel2')).lower()  # "my granddaughter's name": no relation word memory knows
    elif _REPORT_TO.search(text):
        relation = 'manager'  # "who's the CTO I report to?"
    wants_name = bool(_NAME_ASKED.search(text)) and not keys
    if wants_name and relation is None:
        keys = frozenset({'name', 'preferred_name'})
    names = tuple(n for n in _names(text) if n != owner)
    places = tuple(n for n in names if re.search(rf'\b(?:in|at|for|from|with)\s+{re.escape(n)}\b', text))
    several = bool(_ORDINAL.search(text))
    plural = bool(_FIRST_PERSON.search(text)) and not _SINGULAR_FIRST_PERSON.search(text)
    return Asked(bool(_FIRST_PERSON.search(text)), names, relation, owner, keys, wants_name, places, several, said, plural)


def _singular(word: str) -> str:
    spoken = ' '.join(word.lower().split())
    for plural, single in (('children', 'child'), ('kids', 'kid'), ('pets', 'pet')):
        if spoken == plural:
            return single
    return spoken[:-1] if spoken.endswith('s') and spoken[:-1] in PERSON_RELATIONS | SPECIES.keys() else spoken


def _names(text: str) -> list[str]:
    """Runs of up to three capitalised words (in any script: "Борис", "Ólafur") that are not the question's own
    ("What", "Remind"): the people and things it names."""
    found: list[str] = []
    run: list[str] = []
    for m in _WORD_OR_GAP.finditer(text + ' .'):
        word = m.group('word')
        if word and word[0].isupper() and len(run) < 3:
            run.append(word)
            continue
        words = [re.sub(r"['’]s$", '', w) for w in run if w not in _QUESTION_WORDS]
        if words:
            found.append(' '.join(words))
        run = [word] if word and word[0].isupper() else []
    return found


def relation_labels(word: str) -> frozenset[str]:
    """The relation labels a spoken relation word reaches: "dog" → any pet (its species is checked on the entity),
    "mum" → mother, "boss" → manager, "kids" → son, daughter and child."""
    if word in PERSON_RELATIONS:
        label = PERSON_RELATIONS[word][0]
        return frozenset({'son', 'daughter', 'child'}) if label == 'child' else frozenset({label})
    if word in ('son', 'daughter'):
        return frozenset({word, 'child'})
    return frozenset({'pet'}) if word == 'pet' or species_of(word) else frozenset({word})


def species_of(word: str) -> str | None:
    """The species a relation word asks about ("dog", "corgi" → dog), None for people and for "pet"."""
    return SPECIES.get(word) or BREEDS.get(word)
