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
    if len(word) > 3 and word.endswith('ies'):
        return word[:-3] + 'y'
    if len(word) > 3 and word.endswith('s') and not word.endswith(('ss', 'us', 'is')):
        return word[:-1]
    return word


def question_key(text: str) -> QuestionKey | None:
    """The key of ``text``, or None when nothing content-bearing is left (nothing to compare on)."""
    spoken = (
        ' '
        + ' '.join(_CONTRACTIONS.get(t, t) for t in _TOKEN.findall(unicodedata.normalize('NFC', text).casefold().replace('’', "'")))
        + ' '
    )
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
            terms.setdefault(_SYNONYMS.get(token, _singular(token)))
    if not terms:
        return None
    return QuestionKey(ask, frozenset(people), tense, tuple(terms))
