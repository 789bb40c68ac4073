"""Things that happened (or are scheduled): "I booked a flight yesterday", "We're launching on July 12th"."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.extraction.stage0.lexicon import NON_EVENT_VERBS, is_past_form, lemma, word_set
from agent_memory.extraction.stage0.text import clean_value, clip

_PAST = re.compile(
    r"^(?:i|we)\s+(?:(?:just|finally|already|recently|also|then|successfully|have|has|had|'ve|'d)\s+)*(?P<verb>[a-z]+)\b(?P<rest>.*)$",
    re.IGNORECASE,
)
# Future forms only count with a resolvable date: "I'm presenting next Monday", "I'll send it in two days".
_FUTURE = re.compile(
    r"^(?:(?:i'm|i\s+am|we're|we\s+are)\s+(?:going\s+to\s+(?P<base1>[a-z]+)|(?P<ing>[a-z]+ing))"
    r"|(?:i|we)(?:'ll|\s+will|\s+shall)\s+(?P<base2>[a-z]+))\b(?P<rest>.*)$",
    re.IGNORECASE,
)
_PRONOUN_OBJECT = re.compile(r'^(?:it|that|this|them|one|those|these)\b', re.IGNORECASE)
_MAX_VERB_CHARS = 30
_PARTICLES = word_set('in out up back off over down away around home')
_RECIPIENTS = word_set('them him her us me you')
_DETERMINERS = word_set('the a an my our your his her their some this that these those two three four five')


@dataclass(frozen=True)
class Event:
    verb: str
    object_text: str | None


def find_event(text: str, future_date: bool) -> Event | None:
    """A past event, or a future one when the clause carries a resolved future date."""
    if m := _PAST.match(text):
        word = m.group('verb')
        if is_past_form(word) and word.lower() not in NON_EVENT_VERBS and len(word) <= _MAX_VERB_CHARS:
            return _event(lemma(word), m.group('rest'))
    if future_date and (m := _FUTURE.match(text)):
        word = m.group('base1') or m.group('base2') or m.group('ing')
        if word.lower() not in ('going', 'be', 'have', 'get', 'do') and len(word) <= _MAX_VERB_CHARS:
            return _event(lemma(word), m.group('rest'))
    return None


def _event(verb: str, rest: str) -> Event | None:
    tokens = rest.split()
    while tokens and tokens[0].lower() in _PARTICLES:
        tokens = tokens[1:]
    if len(tokens) > 1 and tokens[0].lower() in _RECIPIENTS and tokens[1].lower() in _DETERMINERS:
        tokens = tokens[1:]  # "sent them the revised quote": the object is the quote, "them" only receives it
    obj = clip(clean_value(' '.join(tokens)), 500)
    if _PRONOUN_OBJECT.match(obj):
        return None  # "we cancelled it": the referent is elsewhere; nothing worth recording on its own
    return Event(verb=verb, object_text=obj or None)
