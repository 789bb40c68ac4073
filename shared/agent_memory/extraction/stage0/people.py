"""People and pets introduced in passing: "my sister Ada lives in Toronto", "Ada, my sister, …", "our corgi, Waffles, who
is 3", "I have a dog named Rex", "my manager is called Priya".

An introduction names someone by their relation to the speaker: it yields the relation (``speaker —sister→ Ada``), a
pet's species and breed, and whatever the rest of the clause says about them, read with the same claim patterns as the
speaker's own first-person statements. The one introduced last in the turn is who a following "she's an architect" or
"he's 4" is about. A relative named by no name yields nothing (there is no entity to hold it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.extraction.model import EntityRef, ExtractedAttribute, ExtractedRelation
from agent_memory.extraction.stage0.lexicon import NOT_NAMES, word_set
from agent_memory.extraction.stage0.titles import HONORIFIC, honorific

# spoken word -> (relation label, pronoun); labels are the words a note-taker writes
PERSON_RELATIONS: dict[str, tuple[str, str | None]] = {
    'mother': ('mother', 'she'), 'mom': ('mother', 'she'), 'mum': ('mother', 'she'), 'mommy': ('mother', 'she'),
    'mama': ('mother', 'she'), 'father': ('father', 'he'), 'dad': ('father', 'he'), 'daddy': ('father', 'he'),
    'papa': ('father', 'he'), 'sister': ('sister', 'she'), 'sis': ('sister', 'she'), 'brother': ('brother', 'he'),
    'bro': ('brother', 'he'), 'husband': ('husband', 'he'), 'hubby': ('husband', 'he'), 'wife': ('wife', 'she'),
    'partner': ('partner', None), 'boyfriend': ('partner', 'he'), 'bf': ('partner', 'he'), 'girlfriend': ('partner', 'she'),
    'gf': ('partner', 'she'), 'fiance': ('partner', 'he'), 'fiancé': ('partner', 'he'), 'fiancee': ('partner', 'she'),
    'fiancée': ('partner', 'she'), 'spouse': ('partner', None), 'son': ('son', 'he'), 'daughter': ('daughter', 'she'),
    'kid': ('child', None), 'child': ('child', None), 'grandmother': ('grandmother', 'she'), 'grandma': ('grandmother', 'she'),
    'gran': ('grandmother', 'she'), 'granny': ('grandmother', 'she'), 'nan': ('grandmother', 'she'), 'nana': ('grandmother', 'she'),
    'grandfather': ('grandfather', 'he'), 'grandpa': ('grandfather', 'he'), 'grandad': ('grandfather', 'he'),
    'granddad': ('grandfather', 'he'), 'aunt': ('aunt', 'she'), 'auntie': ('aunt', 'she'), 'uncle': ('uncle', 'he'),
    'cousin': ('cousin', None), 'niece': ('niece', 'she'), 'nephew': ('nephew', 'he'), 'friend': ('friend', None),
    'best friend': ('friend', None), 'bestie': ('friend', None), 'manager': ('manager', None), 'boss': ('manager', None),
    'supervisor': ('manager', None), 'line manager': ('manager', None), 'colleague': ('colleague', None),
    'coworker': ('colleague', None), 'co-worker': ('colleague', None), 'teammate': ('colleague', None),
    'flatmate': ('flatmate', None), 'roommate': ('flatmate', None), 'housemate': ('flatmate', None),
    'neighbour': ('neighbour', None), 'neighbor': ('neighbour', None), 'mother-in-law': ('mother-in-law', 'she'),
    'father-in-law': ('father-in-law', 'he'), 'sister-in-law': ('sister-in-law', 'she'), 'brother-in-law': ('brother-in-law', 'he'),
    'stepmother': ('stepmother', 'she'), 'stepmom': ('stepmother', 'she'), 'stepfather': ('stepfather', 'he'),
    'stepdad': ('stepfather', 'he'), 'stepson': ('stepson', 'he'), 'stepdaughter': ('stepdaughter', 'she'),
    'mentor': ('mentor', None), 'employee': ('employee', None), 'assistant': ('assistant', None),
    'co-author': ('co-author', None), 'coauthor': ('co-author', None), 'other half': ('partner', None),
}  # fmt: skip
_PLURALS = {'kids': 'kid', 'children': 'child', 'twins': 'kid', 'sons': 'son', 'daughters': 'daughter', 'sisters': 'sister',
            'brothers': 'brother',
            'dogs': 'dog', 'cats': 'cat', 'rabbits': 'rabbit', 'bunnies': 'bunny', 'kittens': 'kitten', 'puppies': 'puppy',
            'hamsters': 'hamster', 'guinea pigs': 'guinea pig', 'budgies': 'budgie', 'chickens': 'chicken', 'hens': 'hen'}  # fmt: skip
# spoken word -> species; a breed also says its species
SPECIES: dict[str, str] = {
    'dog': 'dog', 'doggo': 'dog', 'pup': 'dog', 'puppy': 'dog', 'cat': 'cat', 'kitty': 'cat', 'kitten': 'cat', 'rabbit': 'rabbit',
    'bunny': 'rabbit', 'hamster': 'hamster', 'guinea pig': 'guinea pig', 'parrot': 'parrot', 'budgie': 'budgie',
    'cockatiel': 'cockatiel', 'bird': 'bird', 'goldfish': 'goldfish', 'fish': 'fish', 'horse': 'horse', 'pony': 'pony',
    'tortoise': 'tortoise', 'turtle': 'turtle', 'lizard': 'lizard', 'gecko': 'gecko', 'snake': 'snake', 'ferret': 'ferret',
    'hen': 'chicken', 'chicken': 'chicken', 'goat': 'goat', 'rat': 'rat', 'mouse': 'mouse', 'bearded dragon': 'lizard',
}  # fmt: skip
BREEDS: dict[str, str] = {
    **dict.fromkeys((
        'golden retriever', 'labrador retriever', 'labrador', 'lab', 'retriever', 'beagle', 'poodle', 'labradoodle', 'cockapoo',
        'goldendoodle', 'dachshund', 'sausage dog', 'spaniel', 'cocker spaniel', 'springer spaniel', 'border collie', 'collie',
        'husky', 'pug', 'bulldog', 'french bulldog', 'frenchie', 'terrier', 'jack russell', 'jack russell terrier', 'yorkie',
        'yorkshire terrier', 'staffie', 'staffy', 'corgi', 'shih tzu', 'chihuahua', 'greyhound', 'whippet', 'german shepherd',
        'alsatian', 'boxer', 'rottweiler', 'doberman', 'schnauzer', 'sheepdog', 'cavalier', 'great dane', 'mastiff', 'shiba inu',
        'shiba', 'akita', 'pomeranian', 'maltese', 'bichon', 'samoyed', 'malamute', 'vizsla', 'weimaraner', 'pointer', 'setter',
        'dalmatian', 'basset hound', 'bloodhound', 'newfoundland', 'bernese mountain dog', 'bernese', 'mutt', 'lurcher',
        'cavapoo', 'maltipoo', 'westie', 'border terrier', 'australian shepherd', 'aussie', 'blue heeler', 'kelpie',
    ), 'dog'),
    **dict.fromkeys((
        'maine coon', 'siamese', 'persian', 'bengal', 'ragdoll', 'tabby', 'sphynx', 'british shorthair', 'russian blue',
        'burmese', 'abyssinian', 'norwegian forest cat', 'scottish fold', 'calico', 'tuxedo cat', 'tortoiseshell', 'ginger tabby',
    ), 'cat'),
    **dict.fromkeys(('flemish giant', 'lop', 'mini lop', 'holland lop', 'lionhead', 'netherland dwarf', 'dwarf lop'), 'rabbit'),
}  # fmt: skip
_NUMBER_WORDS = {
    'one': '1', 'two': '2', 'three': '3', 'four': '4', 'five': '5', 'six': '6', 'seven': '7', 'eight': '8', 'nine': '9',
    'ten': '10', 'eleven': '11', 'twelve': '12', 'thirteen': '13', 'fourteen': '14', 'fifteen': '15', 'sixteen': '16',
    'seventeen': '17', 'eighteen': '18', 'nineteen': '19', 'twenty': '20',
}  # fmt: skip
_NOT_NAME = NOT_NAMES | word_set(
    'I It He She They We You My Our Your The A An This That There Here Who Which What When Where Why How And But So Or '
    'Mr Mrs Ms Dr Sir Madam Lol Haha Yeah Yes No Ok Okay Oh Btw Honestly Basically Actually Anyway Also Still'
)


def _alternation(words: list[str]) -> str:
    return '|'.join(re.escape(w).replace(r'\ ', r'\s+') for w in sorted(words, key=len, reverse=True))


_PERSON_WORD = _alternation([*PERSON_RELATIONS, *_PLURALS])
_PET_WORD = _alternation([*SPECIES, *BREEDS])
_PETS_WORD = _alternation([w for w, one in _PLURALS.items() if one in SPECIES])
_KIN = rf'(?P<rel>{_PERSON_WORD}|{_PET_WORD})'
_ADJECTIVES = (
    r'(?:(?:little|big|older|younger|elder|baby|twin|eldest|oldest|youngest|new|old|best|dear|late|lovely|sweet|crazy|other|'
    r'adopted|rescue|senior|immediate|current|former|ex-|fluffy|principal|main|closest)\s+){0,2}'
)
_NAME_WORD = r"(?-i:[A-ZÀ-ÖØ-Þ][\w-]*(?:['’][A-ZÀ-ÖØ-Þ][\w-]*)?)"  # "O'Brien", never "That's"
# "Dr. J. R. Tamsett", "Sir Anthony Bellweather": an honorific before the name is kept apart (``title``), initials are
# part of the name
_NAME = rf'(?:{HONORIFIC}\s+)?(?P<name>(?-i:[A-Z]\.\s?){{0,3}}(?!(?-i:[A-Z])\.){_NAME_WORD}(?:\s+{_NAME_WORD}){{0,2}})'
_END_OF_NAME = r"(?=$|[\s,.;:!?)(—–'’-])"
_MY = r'(?:my|our)\s+'
_MY_OR_TERSE = r'(?:(?:my|our)\s+)?'  # at the start of a clause, terse speech drops it: "flatmate's Ines", "brother Paweł"
# "my sister Ada …", "my husband, Graham, is …", "our son Theo is 8"
_MY_KIN_NAME = re.compile(rf'^{_MY_OR_TERSE}{_ADJECTIVES}{_KIN}\s*,?\s+{_NAME}{_END_OF_NAME}\s*,?(?P<rest>.*)$', re.I)
# "my manager is called Priya", "my boss name is Peter Haldane", "my dog's name is Rex", "my bf is Jordan"
_MY_KIN_IS = re.compile(
    rf"^{_MY_OR_TERSE}{_ADJECTIVES}{_KIN}(?:'s\s+name\s+is|\s+name\s+is|\s+is\s+called|\s+is\s+named|\s+goes\s+by|\s+is|'s|\s*=|\s*:)\s*{_NAME}"
    rf"\s*(?P<rest>$|[,;:!.].*|\s+(?:btw|by the way|and|who|now|lol|of|from|at|she|he|shes|hes|she's|he's)\b.*)$",
    re.I,
)
# "Ada, my sister, lives in …", "Waffles, our corgi, who is 3", "Pudding (our beagle)"
_NAME_MY_KIN = re.compile(rf'^{_NAME}\s*(?:,|\()\s*{_MY}{_ADJECTIVES}{_KIN}\s*(?:,|\))?(?P<rest>.*)$', re.I)
# "Ada is my sister", "Rex is our dog"
_NAME_IS_MY_KIN = re.compile(rf"^{_NAME}\s+(?:is|'s)\s+{_MY}{_ADJECTIVES}{_KIN}\b(?P<rest>.*)$", re.I)
# "I have a dog named Rex", "we have a golden retriever, Biscuit, he's 4", "we have one daughter, Mimi"
_HAVE_KIN = re.compile(
    rf"^(?:i|we)\s+(?:have|'ve\s+got|have\s+got|got|adopted|rescued|also\s+have)\s+(?:a|an|one|1|this|our|my)\s+"
    rf'{_ADJECTIVES}{_KIN}(?:\s+too|\s+as\s+well)?\s*(?:,|:|—|–|-|\s+named|\s+called|\s+whose\s+name\s+is)?\s*{_NAME}{_END_OF_NAME}'
    r'\s*,?(?P<rest>.*)$',
    re.I,
)
# "Pickle is a tabby", "there's Mochi who's a ragdoll": a named animal said to be a breed or species is the speaker's pet
_NAME_IS_A_PET = re.compile(
    rf"^{_NAME}\s+(?:is|'s|who's|who\s+is)\s+(?:a|an)\s+{_ADJECTIVES}(?P<rel>{_PET_WORD})\b"
    r'(?!\s+(?:person|people|lover|owner|walker|trainer|sitter|groomer|fan|food|bed|toy|park|show))(?P<rest>.*)$',
    re.I,
)
# "Biscuit the beagle", "Theo, our 8-year-old" is not read (the age there is not a relation)
_NAME_THE_PET = re.compile(rf'^{_NAME}\s+the\s+{_ADJECTIVES}(?P<rel>{_PET_WORD})\b\s*,?(?P<rest>.*)$', re.I)
# "… and then there's Waffles, our corgi, who …", "there's Mochi who's a ragdoll"
_THERE_IS = re.compile(r"^(?:and\s+)?(?:then\s+)?there(?:'s|\s+is)\s+(?P<rest>.+)$", re.I)
# "We have also two rabbits, Kaas and Beschuit", "we've got two cats called Pickle and Mochi", "We have twins, Sem and Fenna"
_HAVE_PETS = re.compile(
    rf"^(?:i|we)\s+(?:also\s+)?(?:have|'ve\s+got|have\s+got|got|adopted)\s+(?:also\s+)?(?:(?:two|2|three|3)\s+)?{_ADJECTIVES}"
    rf'(?P<rel>{_PETS_WORD}|twins|kids|children|sons|daughters)\s*(?:,|:|—|–|-|\s+named|\s+called)?\s*(?P<name>{_NAME_WORD})'
    r'\s*(?:,|and|&)\s*(?:and\s+)?'
    rf'(?P<second>{_NAME_WORD})(?:\s*,?\s*and\s+(?P<third>{_NAME_WORD}))?{_END_OF_NAME}',
    re.I,
)
# "… and an elderly and opinionated whippet called Marlowe, aged 12": a pet named in passing by "called" or "named"
_PET_CALLED = re.compile(
    rf'\b(?:a|an|our|my)\s+(?:[a-z]+,?\s+(?:and\s+)?){{0,3}}?(?P<rel>{_PET_WORD})\s+(?:called|named)\s+{_NAME}{_END_OF_NAME}',
    re.I,
)
# "I adopted a kitten last week!!" … "Her name is Jabuticaba": a pet not yet named, then its name
_UNNAMED_PET = re.compile(
    rf"^(?:i|we)\s+(?:just\s+|finally\s+|also\s+)?(?:adopted|got|rescued|brought\s+home|have|'ve\s+got|have\s+got)\s+(?:a|an)\s+"
    rf'{_ADJECTIVES}(?P<rel>{_PET_WORD})\b(?!\s*(?:,|:|named|called)?\s*(?-i:[A-Z]))',
    re.I,
)
_ITS_NAME = re.compile(
    rf"^(?:(?:his|her|its|their)\s+name(?:'s|\s+is)|(?:he|she|it)(?:'s|\s+is)\s+(?:called|named))\s+{_NAME}{_END_OF_NAME}"
    r'\s*,?(?P<rest>.*)$',
    re.I,
)


def unnamed_pet(clause: str) -> str | None:
    """The pet word of "I adopted a kitten", a pet the speaker has and has not named (yet)."""
    m = _UNNAMED_PET.match(clause.strip())
    return m.group('rel') if m else None


def pet_named(clause: str, word: str, speaker: EntityRef) -> Introduction | None:
    """The pet of ``word`` named by "Her name is Jabuticaba, she is …", with the rest of the clause about it."""
    m = _ITS_NAME.match(clause.strip())
    return introduced(word, m.group('name'), m.group('rest'), speaker) if m and _plausible_name(m.group('name')) else None


# a relative named anywhere in the clause: "I'm visiting my sister Ada" (the relation, nothing more)
_MENTION = re.compile(rf'\b{_MY}{_ADJECTIVES}{_KIN}\s*,?\s+{_NAME}{_END_OF_NAME}', re.I)
# what follows an introduction that is about the one introduced
_WHO = re.compile(r"^(?:,\s*)?(?:who(?:'s|\s+is)|which\s+is|that\s+is|who)\s+", re.I)
_PRONOUN_IS = re.compile(r"^(?:,\s*)?(?:and\s+)?(?P<p>he|she|they)(?:'s|s|\s+is|\s+are|'re)\s+", re.I)  # "hes", "shes"
_PRONOUN_VERB = re.compile(r'^(?:,\s*)?(?:and\s+)?(?P<p>he|she|they)\s+(?=[a-z])', re.I)
_VERB_FIRST = re.compile(r'^(?:lives|works|teaches|studies|plays|speaks|loves|hates)\s', re.I)
# "a golden retriever", "a ragdoll": the breed or species said of a pet already named
_A_PET = re.compile(rf'^(?:a|an)\s+{_ADJECTIVES}(?P<rel>{_PET_WORD})\b', re.I)


@dataclass(frozen=True)
class Referent:
    """Someone the turn introduced, whom a following pronoun may mean."""

    entity: EntityRef
    pronoun: str | None  # 'he', 'she' or None (either)


@dataclass(frozen=True)
class Introduction:
    referents: list[Referent]
    relations: list[ExtractedRelation]
    attributes: list[ExtractedAttribute]
    rest: str  # what the clause goes on to say about the last one introduced ('' when nothing)
    before: str = ''  # what the clause says before naming them in passing ("I live in Ambleworth with my wife, …")


def _kin(word: str) -> tuple[str, str | None, str | None, str | None]:
    """(relation label, pronoun, species, breed) of a spoken relation or pet word."""
    spoken = ' '.join(word.lower().split())
    spoken = _PLURALS.get(spoken, spoken)
    if spoken in PERSON_RELATIONS:
        label, pronoun = PERSON_RELATIONS[spoken]
        return label, pronoun, None, None
    if spoken in BREEDS:
        return 'pet', None, BREEDS[spoken], spoken
    return 'pet', None, SPECIES.get(spoken, spoken), None


def _plausible_name(name: str) -> bool:
    words = name.split()
    return bool(words) and words[0] not in _NOT_NAME and not any(w.lower() in NOT_NAMES for w in words)


def introduce(clause: str, speaker: EntityRef) -> Introduction | None:
    """The people and pets a clause introduces by their relation to the speaker, with the rest of the clause."""
    text = clause.strip()
    if m := _THERE_IS.match(text):
        text = m.group('rest')
    for pattern in (_MY_KIN_IS, _MY_KIN_NAME, _NAME_MY_KIN, _NAME_IS_MY_KIN, _HAVE_KIN, _NAME_THE_PET, _NAME_IS_A_PET):
        m = pattern.match(text)
        if m and _plausible_name(m.group('name')):
            return introduced(m.group('rel'), m.group('name'), m.group('rest'), speaker, m.groupdict().get('title'))
    if (m := _HAVE_PETS.match(text)) and all(_plausible_name(n) for n in m.group('name', 'second')):
        return _several(m.group('rel'), [n for n in m.group('name', 'second', 'third') if n], speaker)
    if (m := _PET_CALLED.search(text)) and _plausible_name(m.group('name')):
        found = introduced(m.group('rel'), m.group('name'), text[m.end() :], speaker, m.group('title'))
        return Introduction(found.referents, found.relations, found.attributes, found.rest, text[: m.start()].strip())
    if (m := _MENTION.search(text)) and _plausible_name(m.group('name')):  # named in passing: only the relation
        rest = text[m.end() :]  # "… with my wife, Dr. Teodora Vasquez-Hale, who is a consultant cardiologist"
        found = introduced(m.group('rel'), m.group('name'), rest if _WHO.match(rest) else '', speaker, m.group('title'))
        before = text[: m.start()].strip()
        return Introduction(found.referents, found.relations, found.attributes, found.rest, before)
    return None


def introduced(word: str, name: str, rest: str, speaker: EntityRef, title: str | None = None) -> Introduction:
    label, pronoun, species, breed = _kin(word)
    said = ' '.join(name.split())
    entity = EntityRef(type='person' if species is None else 'other', name=f'{title} {said}' if title and species else said)
    age = aged(rest) if species else None  # "a whippet called Marlowe, aged 12"
    facts = (('species', species), ('breed', breed), ('title', honorific(title) if title and species is None else None), ('age', age))
    attributes = [ExtractedAttribute(entity=entity, key=key, value=value, category='identity') for key, value in facts if value]
    relation = ExtractedRelation(subject=speaker, label=label, object=entity, category='identity')
    return Introduction([Referent(entity, pronoun)], [relation], attributes, about_them(rest))


def _several(word: str, names: list[str], speaker: EntityRef) -> Introduction:
    """Two or three pets or children named together: each with the relation said, none with the rest of the clause."""
    each = [introduced(word, name, '', speaker) for name in names]
    return Introduction(
        [r for i in each for r in i.referents], [r for i in each for r in i.relations], [a for i in each for a in i.attributes], ''
    )


def about_them(rest: str) -> str:
    """The rest of an introduction as a third-person predicate (" lives in X", " is 8"), or '' when it says nothing of
    them ("…, she's an architect": a pronoun clause, read as its own clause)."""
    rest = rest.strip()
    if not rest:
        return ''
    if m := _WHO.match(rest) or _PRONOUN_IS.match(rest):  # "…, who is 3", "Mimi, she is 5": about the one just named
        rest = 'is ' + rest[m.end() :]
    elif m := _PRONOUN_VERB.match(rest):
        rest = rest[m.end() :]
    rest = re.sub(r"^['’]s\s+", 'is ', rest.lstrip(' ,;:—–-'))  # "Paweł's an electrician"
    return rest if re.match(r"^(?:is|'s|was|has|had|lives|lived|works|worked|teaches|moved|just|still|now|also|loves|likes|hates|"
                            r'turned|turns|recently|got|does|doesn\'t|is not|isn\'t|was|used|plays|speaks|studies|goes|runs|owns|'
                            r'[a-z]+s\b)', rest, re.I) else ''  # fmt: skip


def pronoun_subject(clause: str, referents: list[Referent]) -> tuple[EntityRef, str] | None:
    """ "she's an architect" → (the last she introduced, "is an architect"); a clause that opens on its verb
    ("…, lives in Zielonobór") is about the one introduced last; None when no referent fits."""
    if referents and _VERB_FIRST.match(clause):
        return referents[-1].entity, clause
    m = _PRONOUN_IS.match(clause)
    predicate = f'is {clause[m.end() :]}' if m else None
    if m is None:
        m = _PRONOUN_VERB.match(clause)
        predicate = clause[m.end() :] if m else None
    if m is None or predicate is None:
        return None
    said = m.group('p').lower()
    if said == 'they':
        return None  # plural: which ones is not said
    fitting = [r for r in referents if r.pronoun in (None, said)]
    return (fitting[-1].entity, predicate) if fitting else None


def pet_kind(text: str, entity: EntityRef) -> list[ExtractedAttribute]:
    """ "is a tabby", "is a golden retriever", "is a Maine Coon, 9 years old": a pet's breed and species said after its
    name, and the age said beside them."""
    said = re.sub(r'^(?:is|\'s)\s+(?:(?:like|just|basically|actually)\s+)?', '', text.strip(), flags=re.I)
    m = _A_PET.match(said)
    if not m:
        old = _OLD.search(said) if entity.type == 'other' else None  # "she is black with white paws, 3 months old"
        return [ExtractedAttribute(entity=entity, key='age', value=v, category='identity')] if old and (v := pet_age(old)) else []
    _, _, species, breed = _kin(m.group('rel'))
    age = _AGED.match(said[m.end() :])
    pairs = (('species', species), ('breed', breed), ('age', pet_age(age) if age else None))
    return [ExtractedAttribute(entity=entity, key=k, value=v, category='identity') for k, v in pairs if v]


# ", 9 years old", ", 2 yrs", ", aged 12", ", 3 months old": an age said beside the kind or the name
_AGED = re.compile(
    r'^\s*,?\s*(?:aged\s+)?(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)'
    r'(?>\s*(?P<unit>years?|yrs?|y/?o|months?|mos?|weeks?)\b(?:\s+old\b)?|(?=\s*(?:$|[,.;!])))'
    r'(?!\s*,?\s*(?:i\s+think|i\s+guess|i\s+believe|maybe|probably|or\s+so|ish)\b)',  # "5 yrs old i think": a guess
    re.I,
)


_OLD = re.compile(
    r',\s*(?P<n>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s*(?P<unit>years?|yrs?|months?|weeks?)\s+old\b',
    re.I,
)


def aged(text: str) -> str | None:
    m = _AGED.match(text)
    return pet_age(m) if m else None


def pet_age(m: re.Match[str]) -> str | None:
    n, unit = number_word(m.group('n')), (m.group('unit') or '').lower()
    if not m.group(0).lower().lstrip(' ,').startswith('aged') and not unit:
        return None  # a bare number beside a kind is no age ("a lop, 3 of them")
    if unit.startswith('mo'):
        return f'{n} months'
    if unit.startswith('week'):
        return f'{n} weeks'
    return n


_TENS = {'twenty': 20, 'thirty': 30, 'forty': 40, 'fifty': 50, 'sixty': 60, 'seventy': 70, 'eighty': 80, 'ninety': 90}
NUMBER_WORDS = (
    r'(?:(?:twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:[-\s](?:one|two|three|four|five|six|seven|eight|nine))?|'
    r'one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)'
)


def number_word(text: str) -> str:
    """A number said in words as digits ("nine" → "9", "seventy-eight" → "78"); anything else as it is."""
    folded = text.lower()
    if folded in _NUMBER_WORDS:
        return _NUMBER_WORDS[folded]
    tens, _, unit = folded.replace(' ', '-').partition('-')
    if tens in _TENS and (not unit or unit in _NUMBER_WORDS and int(_NUMBER_WORDS[unit]) < 10):
        return str(_TENS[tens] + (int(_NUMBER_WORDS[unit]) if unit else 0))
    return text
