"""Bare phrases standing for a value: a corrected value ("— well, co-CEO"), or the answer to an open uncertainty
("For the record: Cascais.", "Yes, Hamburg is right", "And yeah, co-CTO", "Growth, correct.")."""

from __future__ import annotations

import re

from agent_memory.extraction.model import ExtractedUncertainty, ExtractionContext
from agent_memory.extraction.stage0.claim import Claim
from agent_memory.extraction.stage0.lexicon import TIER_WORDS
from agent_memory.extraction.stage0.reading import Finding, Reading
from agent_memory.extraction.stage0.text import PROPER, clean_value
from agent_memory.extraction.stage0.titles import is_job_title

# "it's", "technically", "more like": what leads a bare corrected value; " plan" is the key restated, not the value.
_FRAGMENT_LEAD = re.compile(
    r"^(?:(?:it's|it is|that's|that is|technically|more like|more precisely|precisely|officially|strictly speaking|really)\s+)+",
    re.IGNORECASE,
)
_FRAGMENT_TIER = re.compile(r'\s+(?:plan|tier|subscription)$', re.IGNORECASE)
_PLACE_PREPOSITION = re.compile(r'^(?:at|in|to|for|with|from|on)\s+(?=[A-Z])')
_NAME_LIKE_KEYS = frozenset({'employer', 'location', 'hometown', 'name', 'preferred_name', 'current_location'})
# "Yes, …", "And yeah, …", "Right — …": the speaker confirming one of the values in doubt.
_AFFIRMATION_LEAD = re.compile(
    r"^(?:(?:and|so|oh|but|ok|okay)[\s,]+)?(?:yes|yeah|yep|yup|right|correct|exactly|indeed|that's right|that's correct)\b[\s,:;!.—–-]*",
    re.IGNORECASE,
)
# "… is right", "…, correct", "…, that's the one", "… it is".
_AFFIRMATION_TAIL = re.compile(
    r"(?:\s+(?:is|was)\s+(?:the\s+)?(?:right|correct)(?:\s+one)?|[\s,;:—–-]+(?:that's|that is)\s+(?:right|correct|it|the\s+one)"
    r'|[\s,;:—–-]+(?:correct|right|exactly|confirmed|yes|yep|yeah)|\s+it\s+is)$',
    re.IGNORECASE,
)
_LONGEST_TAIL = 40
_CLAUSE_END = re.compile(r'[,;]|\s[—–-]{1,2}\s')
_CANDIDATES = re.compile(r"'([^']{1,200})'")


def fragment_value(text: str, key: str) -> str | None:
    """A bare phrase standing for a value of ``key`` ("co-CEO", "Cascais"), or None if it does not look like one."""
    value = _FRAGMENT_TIER.sub('', _FRAGMENT_LEAD.sub('', clean_value(_FRAGMENT_LEAD.sub('', text.strip()))))
    if not value or len(value.split()) > 6:
        return None
    if key in _NAME_LIKE_KEYS:
        value = _PLACE_PREPOSITION.sub('', value)  # "sorry, at Finlytics", "I mean in Cascais"
        m = re.fullmatch(PROPER, value)
        return value if m else None
    if key == 'occupation':
        return value if is_job_title(value) else None
    return value if not re.match(r"^(?:i|i'm|we|my|it|this|that|he|she|they)\b", value, re.IGNORECASE) else None


def answer_to_open_question(text: str, ctx: ExtractionContext, clarifying: bool) -> Reading:
    """A bare value that settles an open uncertainty: after "for the record" / "to be clear" the one open uncertainty
    takes it; after "yes" or before "is right" it settles the one open uncertainty whose key the value fits (a place is
    no title, a plan is a tier, "the Growth plan" names its key), or, when several fit, the one that named this value as
    a candidate."""
    open_ = [u for u in ctx.open_uncertainties if u.entity is not None and u.key]
    if not open_:
        return Reading()
    bare = _affirmed(text)
    if bare is None and not clarifying:
        return Reading()
    said = bare or text
    fits = [(u, v) for u in open_ if (v := _fitting_value(said, u, loose=clarifying and len(open_) == 1))]
    ending = said.rstrip(' .!')
    if _FRAGMENT_TIER.search(ending, max(0, len(ending) - _LONGEST_TAIL)):  # "the Growth plan" says its key
        fits = [(u, v) for u, v in fits if u.key == 'plan']
    if len(fits) > 1:
        fits = [(u, v) for u, v in fits if _named(v, u)]
    if len(fits) != 1:
        return Reading()
    settled, value = fits[0]
    assert settled.entity is not None and settled.key is not None
    entity, key = settled.entity, settled.key
    return Reading(findings=[Finding(entity=entity, key=key, value=value, category=Claim(key, value).category(entity.type))])


def _affirmed(text: str) -> str | None:
    """The value a confirmation names ("Yes, Hamburg is right" → "Hamburg"), or None if the text confirms nothing."""
    lead = _AFFIRMATION_LEAD.match(text)
    rest = text[lead.end() :] if lead else text
    tails = 0
    for _ in range(2):  # "Hamburg is correct, yes"
        tail = _AFFIRMATION_TAIL.search(rest, max(0, len(rest) - _LONGEST_TAIL))  # bounded: no rescans of a long run
        if tail is None:
            break
        rest, tails = rest[: tail.start()], tails + 1
    if not (lead or tails):
        return None
    if not tails and (cut := _CLAUSE_END.search(rest)):
        rest = rest[: cut.start()]  # "Yes, Hamburg, sorry for the confusion"
        if tail := _AFFIRMATION_TAIL.search(rest, max(0, len(rest) - _LONGEST_TAIL)):
            rest = rest[: tail.start()]  # "Yes, Hamburg is right, sorry for the confusion"
    return rest.strip(' ,;:.!—–-') or None


def _candidate_named(text: str, uncertainty: ExtractedUncertainty) -> str | None:
    """ "yeah, hamburg" typed in lowercase: the candidate the uncertainty named ('Hamburg'), spelled as it was named."""
    wanted = clean_value(text).casefold()
    return next((c for c in _CANDIDATES.findall(uncertainty.about) if c.casefold() == wanted), None)


def _fitting_value(text: str, uncertainty: ExtractedUncertainty, loose: bool) -> str | None:
    """The value of the uncertainty's key that the text names, if it has that key's shape (a name for a place, a job
    title for a title, a tier for a plan); for other keys only a value the uncertainty itself named, unless ``loose``."""
    key = str(uncertainty.key)
    value = fragment_value(text, key) or _candidate_named(text, uncertainty)
    if value is None or loose or key == 'occupation':
        return value
    if key in _NAME_LIKE_KEYS:  # "Growth" names a tier, not a place or a company
        return None if all(w in TIER_WORDS for w in value.lower().split()) and not _named(value, uncertainty) else value
    if key == 'plan' and any(w in TIER_WORDS for w in value.lower().split()):
        return value
    return value if _named(value, uncertainty) else None


def _named(value: str, uncertainty: ExtractedUncertainty) -> bool:
    return f"'{value.casefold()}'" in uncertainty.about.casefold()
