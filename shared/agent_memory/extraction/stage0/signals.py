"""Sentence-level signals that change what a sentence may yield: questions, hypotheticals, sarcasm, corrections."""

from __future__ import annotations

import re

from agent_memory.extraction.stage0.dates import Tense
from agent_memory.extraction.stage0.lexicon import is_past_form

_QUESTION_START = re.compile(
    r"^(?:do|does|did|is|are|am|was|were|can|could|would|will|should|shall|what|what's|why|how|how's|when|where|who|which|whose|"
    r'have|has|any idea)\b',
    re.IGNORECASE,
)
_HYPOTHETICAL_START = re.compile(r'^(?:if|suppose|supposing|imagine|what if|assuming|hypothetically|in case|unless|say)\b', re.I)
_HYPOTHETICAL = re.compile(
    r"\b(?:wish|would|could|might|may be|maybe|perhaps|probably|hypothetically|i'd|we'd|if i were|if we were|thinking (?:about|of))\b",
    re.IGNORECASE,
)
_SARCASM = (
    re.compile(r'\byeah,? right\b', re.I),
    re.compile(
        r'\boh,? (?:great|joy|wonderful|fantastic|perfect|lovely|brilliant|goody|sure)\b[,!.]* (?:another|more|just what|exactly what)\b',
        re.I,
    ),
    re.compile(r'\boh joy\b', re.I),
    re.compile(r'(?:^|\s)/s\b'),
    re.compile(r'^(?:sure|yeah|oh yeah|right|of course)[,!]? because\b', re.I),
    re.compile(r'\bbecause that (?:always|ever) works\b', re.I),
    re.compile(r'\bjust what I (?:needed|wanted)\b', re.I),
    re.compile(r'\*(?:love|loved|adore|like|enjoy|so|totally|really|thrilled|delighted)\*', re.I),
    re.compile(r'\bwhat a (?:surprise|shock)\b', re.I),
    re.compile(r'\bas if\b', re.I),
)
_COMPLIMENT = re.compile(
    r'^(?:wow|aww+|ooh|omg)\b'
    r"|\b(?:that's|that is|it's|it is|this is|looks|look|sounds)\s+(?:so\s+|really\s+|absolutely\s+|just\s+)?"
    r'(?:gorgeous|amazing|awesome|beautiful|stunning|great|cute|lovely|incredible|cool|fantastic|wonderful|nice|good)\b',
    re.IGNORECASE,
)
# "I love the …" right after a compliment: about the thing just shown.
REACTION = re.compile(r'^(?:I|we)\s+(?:really\s+|just\s+)?(?:love|like|adore|enjoy)\s+the\b', re.IGNORECASE)
CLARIFICATION = re.compile(
    r'^(?:to be clear|to clarify|just to clarify|just to be clear|let me clarify|for the record|to be precise|'
    r'to set the record straight)\b[\s,:;-]*',
    re.IGNORECASE,
)
CORRECTION_MARKER = (
    r'(?:well|actually|i mean|i meant|or rather|rather|sorry|make that|scratch that|strike that|no wait|wait|'
    r'or should i say|i should say|er|erm|um|uh|oops|whoops|my bad|my mistake|correction|no(?=\s*,))'
)
_MARKERS = rf'(?:or\s+)?{CORRECTION_MARKER}\b[,:]?\s*(?:{CORRECTION_MARKER}\b[,:]?\s*)?'  # "or actually", "wait, no,"
# "A — well, B" / "A, actually B" / "A; no wait, B" / "A (well, B)" / "A: sorry, B" / "A! er, B" / "A/well, B" in one sentence.
CORRECTION_SPLIT = re.compile(rf'\s*(?:[—–]|--|\s-|,|;|:|\(|/|\.\.\.|…|!+|\.)\s*{_MARKERS}', re.IGNORECASE)
CORRECTION_START = re.compile(rf'^{_MARKERS}', re.IGNORECASE)
# "I work at Fintrack, Finlytics actually", "I'm the CTO (co-CTO, really)": the corrected value before its marker.
CORRECTION_AFTER = re.compile(
    r'\s*(?:,|\(|[—–]|--|\s-)\s*(?P<value>[^,()—–]{1,60}?)[,\s]+(?:actually|really|rather|i mean|to be precise|technically)\)?$',
    re.IGNORECASE,
)
LONGEST_CORRECTION_AFTER = 90  # searched in the sentence's end only: the value and its marker are short
_FUTURE = re.compile(
    r"\b(?:will|'ll|shall|going to|gonna|next|tomorrow|upcoming|coming)\b|^(?:i'm|i am|we're|we are|\w+ is)\s+\w+ing\b", re.IGNORECASE
)
_PAST = re.compile(r'\b(?:was|were|did|had|ago|yesterday|last)\b', re.IGNORECASE)


def is_compliment(sentence: str) -> bool:
    return bool(_COMPLIMENT.search(sentence))


# "What can I say, I love turtles.": a rhetorical lead, not a question.
_RHETORICAL_LEAD = re.compile(r'^(?:what can i say|guess what|you know what)\b[,:!]', re.IGNORECASE)


def is_question(sentence: str) -> bool:
    text = sentence.strip()
    return text.endswith('?') or (bool(_QUESTION_START.match(text)) and not _RHETORICAL_LEAD.match(text))


def opens_hypothesis(clause: str) -> bool:
    """A conditional clause ("if I were…"): it and the clause it governs state nothing as fact."""
    return bool(_HYPOTHETICAL_START.match(clause))


def is_hypothetical(clause: str) -> bool:
    return opens_hypothesis(clause) or bool(_HYPOTHETICAL.search(clause))


def sarcasm_marker(text: str) -> str | None:
    for pattern in _SARCASM:
        if m := pattern.search(text):
            return m.group(0).strip()
    return None


def tense(clause: str) -> Tense:
    if _FUTURE.search(clause):
        return 'future'
    if _PAST.search(clause):
        return 'past'
    tokens = clause.split()  # "I signed …", or "Signed …" with its subject dropped
    return 'past' if len(tokens) > 1 and any(is_past_form(t.strip(',.')) for t in tokens[:2]) else 'present'
