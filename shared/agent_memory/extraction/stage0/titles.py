"""Job titles: read one off the front of a phrase ("a senior data engineer at Acme") and tell titles from adjectives."""

from __future__ import annotations

import re

from agent_memory.extraction.stage0.lexicon import C_LEVEL, DEPARTMENTS, JOB_HEADS, TITLE_MODIFIERS, word_set

_STOPS = word_set(
    'at for with in on from and since who here now currently too based living located working by but so because to of as over '
    'when while if which where until there rn btw lol tbh haha though anymore up down out over technically basically officially '
    'currently actually really'
)
_TITLED_HEADS = word_set('head vp svp evp director chief manager lead president officer')
# An honorific before a name ("Dr. Patel", "Sir Anthony"): kept as the person's ``title``, never part of the name
HONORIFIC = r'(?P<title>(?-i:Dr|Prof|Mr|Mrs|Ms|Mx|Rev|Sir|Dame|Lord|Lady)\b\.?)'
_HONORIFIC_NAME = re.compile(rf'^{HONORIFIC}\s+(?P<rest>(?-i:[A-Z]).*)$')
_DETERMINERS = re.compile(r'^(?:(?:a|an|the|our|my|their|his|her)\s+)+', re.IGNORECASE)


def split_title(phrase: str) -> tuple[str, str] | None:
    """``(title, rest)`` when the phrase starts with a job title, e.g. "the head of sales at Acme" → ("head of sales", "at Acme")."""
    tokens = _DETERMINERS.sub('', phrase.strip()).split()
    while tokens and tokens[0].lower() in TITLE_MODIFIERS:
        tokens = tokens[1:]
    taken: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        bare = token.rstrip(',;:').lower()
        if bare == 'of' and taken and taken[-1].lower() in _TITLED_HEADS and i + 1 < len(tokens):
            dept = _department_run(tokens[i + 1 :])
            if dept:
                taken += [token, *dept]
                i += 1 + len(dept)
                continue
        if bare in _STOPS or not bare.strip('—–-'):
            break  # a stop word, or a dash opening an appositive ("a product designer -- based in Porto")
        taken.append(token.rstrip(',;:'))
        i += 1
        if token.endswith((',', ';', ':')):
            break
    title = ' '.join(taken)
    return (title, ' '.join(tokens[i:])) if is_job_title(title) else None


def _department_run(tokens: list[str]) -> list[str]:
    run: list[str] = []
    for token in tokens[:2]:
        if token.rstrip(',;:').lower() not in DEPARTMENTS:
            break
        run.append(token.rstrip(',;:'))
        if token.endswith((',', ';', ':')):
            break
    return run


def is_job_title(title: str) -> bool:
    parts = re.sub(r'\bco-', '', title.lower()).split()
    if not parts or len(parts) > 5:
        return False
    core = parts[: parts.index('of')] if 'of' in parts else parts
    if not core:
        return False
    head = core[-1]
    return head in JOB_HEADS or head.rstrip('s') in JOB_HEADS or head in C_LEVEL


def honorific(word: str) -> str:
    """The honorific as written in a title: "Dr." for "Dr" or "Dr.", "Sir" as it is."""
    bare = word.rstrip('.')
    return bare if bare in ('Sir', 'Dame', 'Lord', 'Lady') else f'{bare}.'


def without_honorific(name: str) -> tuple[str | None, str]:
    """ "Dr. Matthias Brandauer" → ("Dr.", "Matthias Brandauer"); a name without one is returned as it is."""
    m = _HONORIFIC_NAME.match(name.strip())
    return (honorific(m.group('title')), m.group('rest')) if m else (None, name)
