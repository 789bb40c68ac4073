"""The canonical form of a /chat question, which the response cache uses next to the embedding (CONTRACT §8).

MiniLM scores paraphrases such as "what is my current plan?" / "tell me my subscription tier?" at 0.30
and near misses such as "what meetings do I have this week?" / "… next week?" at 0.97, so cosine alone
cannot separate them (bench/cache.py). A question's key is what it asks, in a fixed form:

* ``ask``: the wh-word class (who, when, where, why, how, how many; what/which and wh-less requests
  such as "tell me my plan" are ``what``);
* ``people``: whose thing is asked about (I/we/he/she/they/you; "do you know…" and other filler is
  removed first, so the assistant's "you" does not count);
* ``tense``: past (was/did/had), future (will) or present;
* ``terms``: the remaining content words in the order spoken, lower-cased, singular, with a small set of synonyms folded
  (tier → plan, boss → manager, favorite → favourite) and filler removed (please, again, current, …).
  Time deixis (this, next, last, today, …) and negation stay terms.

Two questions with equal keys ask the same thing; a differing ask, person, tense or time/negation word
marks a near miss that similar wording must not hide.

A key folds words (plurals, synonyms, prepositions), so on its own it would make "who is Andreas?" the question "who is
Andrea?", and an embedding scores "balance of account 446d1" and "… 446d2" at 0.98. ``Specifics`` are what must be
equal, whatever the key or the cosine says, before one question's answer is reused for another:

* ``numbers``: every token holding a digit, whole and in order (``446d1``, ``2023``, ``10.0.0.1``, ``v2.1``), and the
  number words (two … billion);
* ``names``: the words written with a capital (a sentence-initial question or function word excepted), exactly as
  spelled; each question's names must appear, unfolded, among the other's words (so a lower-cased repeat still matches);
* ``relations``: the content words in order with the prepositions that tie them together, ``X's Y`` read as
  ``Y of X``; compared when both questions have the same content words and both use such a word ("who do I work
  with?" / "… for?", "Bob's manager" / "Bob the manager of"; "the manager of Bob" is "Bob's manager").
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

# Letters and digits of any script: a word the key dropped would make two different questions one key.
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_CONTRACTIONS = {
    "what's": 'what is', 'whats': 'what is', "who's": 'who is', "where's": 'where is', "when's": 'when is',
    "how's": 'how is', "i'm": 'i am', "i've": 'i have', "i'd": 'i would', "i'll": 'i will', "it's": 'it is',
    "don't": 'do not', "doesn't": 'does not', "didn't": 'did not', "isn't": 'is not', "aren't": 'are not',
    "wasn't": 'was not', "won't": 'will not', "can't": 'can not', "you're": 'you are', "we're": 'we are',
    "they're": 'they are', "what're": 'what are', "we've": 'we have', "they've": 'they have',
}  # fmt: skip
# Requests wrapped around the question; removed before anything else is read (longest first).
_FILLER_PHRASES = (
    'do you happen to know', 'can you tell me', 'could you tell me', 'would you tell me', 'can you remind me',
    'could you remind me', 'do you know', 'do you remember', 'i want to know', 'i would like to know',
    'let me know', 'tell me', 'remind me', 'can you', 'could you', 'would you', 'for me', 'right now',
    'at the moment', 'these days',
)  # fmt: skip
_FILLER_WORDS = frozenset({
    'please', 'again', 'currently', 'current', 'now', 'exactly', 'actually', 'just', 'still', 'kindly',
})  # fmt: skip
_ASK = {'who': 'who', 'whom': 'who', 'whose': 'who', 'when': 'when', 'where': 'where', 'why': 'why', 'how': 'how'}
_HOW_MUCH = frozenset({'many', 'much'})
_PEOPLE = {
    'i': 'i', 'me': 'i', 'my': 'i', 'mine': 'i', 'myself': 'i',
    'we': 'we', 'us': 'we', 'our': 'we', 'ours': 'we', 'ourselves': 'we',
    'he': 'he', 'him': 'he', 'his': 'he', 'himself': 'he',
    'she': 'she', 'her': 'she', 'hers': 'she', 'herself': 'she',
    'they': 'they', 'them': 'they', 'their': 'they', 'theirs': 'they', 'themselves': 'they',
    'you': 'you', 'your': 'you', 'yours': 'you', 'yourself': 'you',
}  # fmt: skip
_PAST = frozenset({'was', 'were', 'did', 'had', 'used'})
_FUTURE = frozenset({'will', 'shall'})
_FUNCTION_WORDS = frozenset({
    'a', 'an', 'the', 'is', 'are', 'am', 'be', 'been', 'being', 'do', 'does', 'have', 'has', 'of', 'on', 'in', 'at',
    'for', 'with', 'by', 'about', 'as', 'and', 'or', 'it', 'its', 'what', 'which', 'some', 'any', 'there', 'that',
    'kind', 'type', 'sort',
})  # fmt: skip
# Folded synonyms: only pairs that name the same memory key in everyday speech.
_SYNONYMS = {
    'tier': 'plan', 'subscription': 'plan', 'favorite': 'favourite', 'boss': 'manager', 'e-mail': 'email',
    'mail': 'email', 'mobile': 'phone', 'cell': 'phone', 'cellphone': 'phone', 'smartphone': 'phone',
    'timezone': 'timezone', 'hometown': 'hometown', 'kids': 'child', 'kid': 'child', 'children': 'child',
    'mum': 'mother', 'mom': 'mother', 'dad': 'father',
}  # fmt: skip
_PHRASE_SYNONYMS = (('time zone', 'timezone'), ('date of birth', 'birthday'), ('e mail', 'email'), ('home town', 'hometown'))


@dataclass(frozen=True)
class QuestionKey:
    ask: str
    people: frozenset[str]
    tense: str
    terms: tuple[str, ...]  # in the order spoken: "who does Alice manage?" is not "who manages Alice?"

    def __str__(self) -> str:
        return f'{self.ask}|{",".join(sorted(self.people))}|{self.tense}|{" ".join(self.terms)}'

    @classmethod
    def parse(cls, stored: str) -> QuestionKey:
        ask, people, tense, terms = stored.split('|')
        return cls(ask, frozenset(filter(None, people.split(','))), tense, tuple(terms.split()))

    def conflicts_with(self, other: QuestionKey) -> bool:
        """A near miss: the same wording asking something else (when/where, my/his, this/next, is/was, not)."""
        return (
            self.ask != other.ask
            or self.people != other.people
            or self.tense != other.tense
            or (set(self.terms) & DISCRIMINATING) != (set(other.terms) & DISCRIMINATING)
        )


DISCRIMINATING = frozenset({
    'this', 'next', 'last', 'previous', 'upcoming', 'first', 'today', 'tonight', 'tomorrow', 'yesterday', 'week',
    'month', 'year', 'weekend', 'morning', 'evening', 'not', 'never', 'no', 'before', 'after', 'from', 'to', 'old',
    'new',
})  # fmt: skip


def _singular(word: str) -> str:
    """A plural's singular; words ending in -as are kept (Andreas, Thomas, Lucas are not plurals of a name)."""
    if len(word) > 3 and word.endswith('ies'):
        return word[:-3] + 'y'
    if len(word) > 3 and word.endswith('s') and not word.endswith(('ss', 'us', 'is', 'as')):
        return word[:-1]
    return word


def _spoken(text: str) -> str:
    return (
        ' '
        + ' '.join(_CONTRACTIONS.get(t, t) for t in _TOKEN.findall(unicodedata.normalize('NFC', text).casefold().replace('’', "'")))
        + ' '
    )


def question_key(text: str) -> QuestionKey | None:
    """The key of ``text``, or None when nothing content-bearing is left (nothing to compare on)."""
    names = _names(text)
    spoken = _spoken(text)
    for phrase in _FILLER_PHRASES:
        spoken = spoken.replace(f' {phrase} ', ' ')
    for phrase, word in _PHRASE_SYNONYMS:
        spoken = spoken.replace(f' {phrase} ', f' {word} ')
    tokens = [t[:-2] if t.endswith("'s") else t for t in spoken.split()]
    ask, tense = 'what', 'present'
    people: set[str] = set()
    terms: dict[str, None] = {}  # an ordered set
    for i, token in enumerate(tokens):
        if token in _ASK and ask == 'what':
            ask = 'how many' if token == 'how' and i + 1 < len(tokens) and tokens[i + 1] in _HOW_MUCH else _ASK[token]
        elif token in _PEOPLE:
            people.add(_PEOPLE[token])
        elif token in _PAST:
            tense = 'past'
        elif token in _FUTURE:
            tense = 'future'
        elif token in _HOW_MUCH and ask == 'how many':
            continue
        elif token not in _FUNCTION_WORDS and token not in _FILLER_WORDS:
            terms.setdefault(token if token in names else _SYNONYMS.get(token, _singular(token)))
    if not terms:
        return None
    return QuestionKey(ask, frozenset(people), tense, tuple(terms))


# ---- specifics: what must be equal for any reuse ----------------------------------------------------------------
_NUMBER = re.compile(r"[^\W_]*\d(?:[^\s,;!?()\[\]{}\"'’]*[^\W_])?")
_THOUSANDS = re.compile(r'(?<=\d),(?=\d{3}\b)')
_NUMBER_WORDS = frozenset({
    'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen',
    'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy',
    'eighty', 'ninety', 'hundred', 'thousand', 'million', 'billion', 'dozen', 'half', 'second', 'third', 'fourth', 'fifth',
})  # fmt: skip
_RELATIONS = frozenset({
    'with', 'for', 'of', 'by', 'to', 'from', 'at', 'in', 'on', 'about', 'under', 'over', 'between', 'without', 'against',
    'into', 'onto', 'toward', 'towards', 'after', 'before', 'behind', 'above', 'below', 'among', 'through', 'via', 'than',
})  # fmt: skip
POSSESSIVE = "'s"
# Words a question may start with (capitalised only because they start it): never a name there.
_STARTERS = frozenset({
    *_ASK, *_PEOPLE, *_PAST, *_FUTURE, *_FUNCTION_WORDS, *_FILLER_WORDS, *_RELATIONS,
    *(word for phrase in _FILLER_PHRASES for word in phrase.split()),
    'remind', 'tell', 'show', 'give', 'list', 'can', 'could', 'would', 'should', 'may', 'might', 'must', 'did', 'were',
    'if', 'how', 'hey', 'hi', 'ok', 'okay', 'so', 'but', 'name', 'any', 'anything', 'who', 'whom', 'whose', 'when', 'where',
    'why', 'which', 'what', 'all', 'every', 'each', 'no', 'not', 'yes',
})  # fmt: skip


def _words(text: str) -> list[str]:
    return _TOKEN.findall(unicodedata.normalize('NFC', text).replace('’', "'"))


def _names(text: str) -> set[str]:
    """Words written with a capital, case-folded, without a possessive; a question or function word starting the
    question does not count (``I`` never does)."""
    names = set()
    for position, word in enumerate(_words(text)):
        base = word[:-2] if word.casefold().endswith(POSSESSIVE) else word
        folded = base.casefold()
        if not base[:1].isupper() or folded == 'i' or (position == 0 and folded in _STARTERS) or folded in _CONTRACTIONS:
            continue
        names.add(folded)
    return names


# Prepositions that belong to a request or a set phrase, not to the question's relation ("remind me of", "kind of").
_FRAME_PHRASES = ('remind me of', 'kind of', 'sort of', 'type of', 'at the moment', 'in general', 'by the way')
_NOT_TERMS = frozenset({*_FUNCTION_WORDS, *_FILLER_WORDS, *_PEOPLE, *_ASK, *_PAST, *_FUTURE, *_HOW_MUCH})
_FRAMES = (*_FRAME_PHRASES, *_FILLER_PHRASES)  # the set phrases first: 'remind me of' before 'can you remind me'


@dataclass(frozen=True)
class Specifics:
    numbers: tuple[str, ...]  # in the order written
    names: frozenset[str]
    words: frozenset[str]  # every word, case-folded and unfolded (possessives stripped): where the other's names must be
    terms: frozenset[str]  # the key's content terms (what relation words are compared on)
    relations: tuple[str, ...]  # content terms and relation words in order, "X's Y" as "Y of X"

    def allow_reuse(self, other: Specifics) -> bool:
        """Equal numbers, each side's names among the other's words, and, over the same content words where both use
        relation words, the same relation."""
        if self.numbers != other.numbers or not self.names <= other.words or not other.names <= self.words:
            return False
        related = any(w in _RELATIONS for w in self.relations) and any(w in _RELATIONS for w in other.relations)
        return not related or self.terms != other.terms or self.relations == other.relations


def _relations(spoken: str, names: set[str]) -> tuple[str, ...]:
    for phrase in _FRAMES:
        spoken = spoken.replace(f' {phrase} ', ' ')
    for phrase, word in _PHRASE_SYNONYMS:
        spoken = spoken.replace(f' {phrase} ', f' {word} ')
    items: list[tuple[str, bool]] = []  # (word, possessive)
    for token in spoken.split():
        possessive = token.endswith(POSSESSIVE)
        word = token[:-2] if possessive else token
        if word in _RELATIONS:
            items.append((word, False))
        elif word in names:
            items.append((word, possessive))
        elif word not in _NOT_TERMS:
            items.append((_SYNONYMS.get(word, _singular(word)), possessive))
    out: list[str] = []
    i = 0
    while i < len(items):
        word, possessive = items[i]
        if possessive and i + 1 < len(items) and items[i + 1][0] not in _RELATIONS:
            out += [items[i + 1][0], 'of', word]  # X's Y is Y of X
            i += 2
            continue
        out += [word, 'of'] if possessive else [word]
        i += 1
    return tuple(out)


def specifics(text: str) -> Specifics:
    folded = _THOUSANDS.sub('', unicodedata.normalize('NFC', text).casefold().replace('’', "'"))
    numbers = [m.group(0) for m in _NUMBER.finditer(folded)]
    spoken = _spoken(text)
    tokens = spoken.split()
    numbers += [w for w in tokens if w in _NUMBER_WORDS]
    order = {n: folded.find(n) for n in numbers}
    words = {w[:-2] if w.endswith(POSSESSIVE) else w for w in tokens}
    names = _names(text)
    key = question_key(text)
    return Specifics(
        numbers=tuple(sorted(numbers, key=lambda n: order[n])),
        names=frozenset(names),
        words=frozenset(words),
        terms=frozenset(key.terms) if key else frozenset(),
        relations=_relations(spoken, names),
    )
