"""Casual registers: misspelt cue words, texting abbreviations of time words and names typed all in lowercase.

Stage 0's patterns key on a closed set of words ("always", "prefer", "upgraded", "manager") and on capitalised names.
People typing fast write "alwyas", "definately", "lst month" and "im dana, i work at brightwave". These helpers put the
words the patterns need back into their dictionary form, token for token (the text keeps its shape, so a span of the
repaired text is the same span of the original), and leave every other word alone.
"""

from __future__ import annotations

import re
from functools import cache

from agent_memory.extraction.stage0.lexicon import DEPARTMENTS, JOB_HEADS, LANGUAGES, NOT_NAMES, TIER_WORDS, word_set
from agent_memory.extraction.stage0.people import BREEDS, PERSON_RELATIONS, SPECIES

# The cue words stage 0 reads (verbs, adverbs and keys its patterns name); only these are ever repaired.
CUE_WORDS = word_set(
    'always never please prefer definitely really actually usually absolutely honestly probably currently recently finally '
    'already upgraded downgraded switched moved relocated joined started promoted working living based located originally '
    'manager supervisor favourite favorite language speak respond reply answer remember allergic vegetarian pescatarian '
    'received finished booked bought shipped signed launched visited cancelled canceled anymore longer subscription '
    'birthday hometown timezone address phone number email name plan love like enjoy hate dislike stand bullet points '
    'emojis spelling british american english sentences responses replies answers explanations summaries messages '
    'tomorrow yesterday today tonight morning afternoon evening weekend month week year ago last next'
)
# Courtesy fillers short enough that only a slip keeping their first and last letters is repaired.
_FILLER_CUES = ('please',)
_KNOWN_WORDS = CUE_WORDS | TIER_WORDS | JOB_HEADS | LANGUAGES | DEPARTMENTS | NOT_NAMES
# Texting abbreviations of time words (whole lowercase words only): "i left lst month", "see you tmrw".
_ABBREVIATIONS = {
    'plz': 'please',
    'lst': 'last',
    'nxt': 'next',
    'tmrw': 'tomorrow',
    'tmr': 'tomorrow',
    'yday': 'yesterday',
    'wknd': 'weekend',
}
_MIN_EDIT_CHARS = 6  # shorter words are often other real words one edit away ("fever"/"never"): only swaps are repaired
_MIN_SWAP_CHARS = 4
_MIN_WRONG_LETTER_CHARS = 8
_WORD = re.compile(r'[A-Za-z]+')


def repair_cue_words(sentence: str) -> str:
    """ "Alwyas use British spelling" → "Always use British spelling"; names and words that are not cues stay as typed."""
    return _WORD.sub(lambda m: _repaired(m.group(0), opens=m.start() == 0), sentence)


def _repaired(token: str, opens: bool) -> str:
    lower = token.lower()
    if token == lower and lower in _ABBREVIATIONS:
        return _ABBREVIATIONS[lower]
    if lower in _KNOWN_WORDS or not (token == lower or (opens and token == lower.capitalize())):
        return token  # a word stage 0 knows, or a name ("Edinbrugh", "Starter" inside a sentence) typed as the speaker meant
    fixed = _nearest_cue(lower)
    if fixed is None:
        return token
    return fixed.capitalize() if token[0].isupper() else fixed


@cache
def _nearest_cue(word: str) -> str | None:
    """The one cue word a single slip away (swap, or for longer words a missing, extra or wrong letter), if exactly one."""
    if len(word) < _MIN_SWAP_CHARS:
        return None
    if len(word) == _MIN_EDIT_CHARS - 1 and (filler := _filler_slip(word)):
        return filler
    found = {c for c in CUE_WORDS if _one_slip(word, c) and not (c.startswith(word) or word.startswith(c))}
    return found.pop() if len(found) == 1 else None


def _filler_slip(word: str) -> str | None:
    """ "plese", "pleae": a courtesy filler one letter short, its first and last letters kept ("lease" and "pleas" are
    words, so they stay)."""
    return next((f for f in _FILLER_CUES if word[0] == f[0] and word[-1] == f[-1] and _missing_one(word, f)), None)


def _missing_one(short: str, long_: str) -> bool:
    return len(long_) == len(short) + 1 and any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _one_slip(word: str, cue: str) -> bool:
    if len(word) == len(cue):
        diff = [i for i, (a, b) in enumerate(zip(word, cue, strict=True)) if a != b]
        if len(diff) == 2 and diff[1] == diff[0] + 1:
            return word[diff[0]] == cue[diff[1]] and word[diff[1]] == cue[diff[0]]
        # a wrong letter: only in long words and not in the ending ("loving"/"living", "receives"/"received" are words)
        return len(diff) == 1 and len(word) >= _MIN_WRONG_LETTER_CHARS and diff[0] < len(word) - 2
    if abs(len(word) - len(cue)) != 1 or min(len(word), len(cue)) < _MIN_EDIT_CHARS:
        return False
    short, long_ = sorted((word, cue), key=len)
    return _missing_one(short, long_)


# ---------------------------------------------------------------------------------------------- all-lowercase names

_KIN_WORDS = '|'.join(sorted((w.replace(' ', r'\s') for w in [*PERSON_RELATIONS, *SPECIES, *BREEDS]), key=len, reverse=True))
_PET_WORDS = '|'.join(sorted((w for w in [*SPECIES, *BREEDS] if ' ' not in w), key=len, reverse=True))
# Where a lowercase typist puts a name: after these cues (lowercase, the first person already restored to "I").
_NAME_SLOT = re.compile(
    r"(?P<cue>\bmy name is |\bmy name's |\bcall me |\bI go by |\b(?:work|working|worked) (?:at|for) |\bjoined "
    r'|\b(?:live|living|lived) in (?:a|an|the|our|my) (?:\w+ ){0,2}?(?:apt|apartment|flat|house|place|condo|town|village) in '
    r"|\b(?:live|living|lived|based|located|moved|relocated|move|moving) (?:in|to) |\bI'm (?:originally )?from "
    r'|\b(?:moved|relocated|came|moving) (?:here |over |back |down |up )?from '
    r'|\b(?:called|named) |\bbeen (?:at|with) |\bjob (?:at|with) |\b(?:a|an) [a-z]+(?: [a-z]+)? at (?:the )?'
    rf"|\b(?:my|our) (?:{_KIN_WORDS}) (?:is |'s |= |: )?|\bthere's (?=[a-z]+ who's (?:a|an) )"
    r"|(?:^|(?<=[.!?,] ))I'm (?=[a-z]+ (?:btw|tbh|lol)\b)|(?:^|(?<=[.!?] ))(?=[a-z]+ here,)"
    rf"|(?:^|(?<=[.!?] ))(?=[a-z]+ (?:is|'s) (?:a|an) (?:{_PET_WORDS})\b))"
    r'(?P<name>[a-z]+(?: [a-z]+){0,2})'
)
# "hey, im jamie, a backend dev at Quorum": a greeting then a lowercase word standing alone is a name in any turn.
_GREETING_NAME = re.compile(r"^(?P<cue>(?:hey|hi|hello|yo)(?: there)?(?:,|!+)? I'm )(?P<name>[a-z]+)(?=[,.!]|$| and )", re.IGNORECASE)
_NOT_NAME_WORDS = NOT_NAMES | word_set(
    'a an the my our your his her their this that these those some any home work night nights weekends remote remotely myself '
    'ourselves it them as and or but since in on at for with from to now days then there here so because which who where when '
    'while if until by of about just still also really currently again too either anymore me you him us town city country '
    'office school college uni university bed love fear hope peace stuck lost bored hungry sick confused exhausted excited after '
    'like lol rn tbh btw ago last next yrs years months weeks now is are was were has had who whose which that shes hes anyone '
    'everyone someone nobody all he she they we i it'
)


# Words that follow "my friend" or "my boss" where a name would stand: what they said or did, not who they are.
_NOT_NAME_VERBS = word_set(
    'said says told tells think thinks thought want wants got gets went goes go made makes took takes keep keeps kept love loves '
    'hate hates like likes lives works moved called call calls asked asks just also always never still really will would can '
    'could should might may must did does do had has have says set sent'
)


def is_caseless(text: str) -> bool:
    """A turn typed with no capital letter at all (then capitalisation says nothing about names)."""
    return len(text.split()) > 1 and not any(ch.isupper() for ch in text)


def capitalise_names(text: str, caseless: bool) -> str:
    """Capitalise the words of a name typed in lowercase: after a greeting ("hey, im jamie,") in any turn, and in every
    name slot of a caseless turn ("i work at brightwave as …" → "I work at Brightwave as …")."""
    text = _GREETING_NAME.sub(lambda m: _capitalised(m, limit=1), text)
    return (
        _NAME_SLOT.sub(lambda m: _capitalised(m, limit=1 if m.group('cue').startswith(('call', 'I go')) else 3), text) if caseless else text
    )


def _capitalised(m: re.Match[str], limit: int) -> str:
    words = m.group('name').split()
    taken: list[str] = []
    after_kin = m.group('cue').startswith(('my ', 'our '))  # "my friend said …": a verb or adverb is no name
    for word in words[:limit]:
        if word in _NOT_NAME_WORDS or (after_kin and (word in _NOT_NAME_VERBS or word.endswith(('ly', 'ed', 'ing')))):
            break
        taken.append(word.capitalize())
    return m.group('cue') + ' '.join(taken + words[len(taken) :])


def as_spoken(repaired: str, spoken: str, start: int, end: int) -> str:
    """The text of ``spoken`` that ``repaired[start:end]`` came from (the repair changes words, never what lies between)."""
    return spoken[_spoken_offset(repaired, spoken, start) : _spoken_offset(repaired, spoken, end)]


def _spoken_offset(repaired: str, spoken: str, offset: int) -> int:
    at_repaired = at_spoken = 0
    for ours, theirs in zip(_SEGMENT.split(repaired), _SEGMENT.split(spoken), strict=False):
        if offset <= at_repaired + len(ours):
            inside = offset - at_repaired
            return at_spoken + (inside if inside < len(ours) or not _WORD.fullmatch(ours) else len(theirs))
        at_repaired += len(ours)
        at_spoken += len(theirs)
    return len(spoken)


_SEGMENT = re.compile(r'([A-Za-z]+)')
