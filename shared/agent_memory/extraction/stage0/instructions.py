"""Behavioural directives (CONTRACT §6.4): find one in a sentence and give it a stable label and a clean description.

The description is the directive as spoken minus discourse fillers ("please", "from now on", "I want you to"), so a
restatement in the same words yields the same label and description (modulo case) and the reconciler merges it; a
reversal ("Stop using bullet points") reads differently and stays a separate instruction.
"""

from __future__ import annotations

import re

from agent_memory.extraction.model import ExtractedInstruction
from agent_memory.extraction.stage0.casual import as_spoken
from agent_memory.extraction.stage0.lexicon import is_past_form, lemma, word_set
from agent_memory.extraction.stage0.text import body, capitalise, clip, words

_FILLERS = re.compile(
    r'^(?:(?:ok(?:ay)?|so|and|also|oh|hey|hi|well|actually|alright|right|yes|yeah|yep|sure|no(?=\s*[,!.:;-])|nope|one more thing|'
    r'btw|by the way|tbh|ngl|imo|imho|lol|just|'
    r'going forward|'
    r'moving forward|from now on|from here on(?: out)?|in (?:the )?future|for future reference|in general|generally|please|kindly|'
    r"pls|remember(?: to)?|note|important|i want you to|i'd like you to|i would like you to|i need you to|"
    r'(?:can|could|would|will) you(?: please)?|make sure(?: to| that you| you)?|you should|you must|you need to|you have to)'
    r'\b[\s,:;!-]*)+',
    re.IGNORECASE,
)
# One trailing courtesy or persistence phrase, matched at the end only; ``_strip_trailing`` peels them one by one.
# (A single pattern with a leading ``[\s,]+`` backtracks from every comma of a run: quadratic on ", , , …".)
_TRAILING = re.compile(
    r'(?<=[\s,])(?:please|pls|thanks|thank you|from now on|going forward|moving forward|in (?:the )?future|from here on(?: out)?|'
    r'tbh|ngl|lol|lmao|imo|imho|haha)$',
    re.IGNORECASE,
)
_LONGEST_TRAILING = len('from here on out')
_PERSISTENCE = re.compile(
    r'\b(?:always|never|from now on|going forward|moving forward|in (?:the )?future|from here on|every time|each time|whenever|'
    r'with me|to me|your (?:responses|replies|answers|messages))\b',
    re.IGNORECASE,
)
# Words after "always"/"never" that make a statement or a past event, not an imperative ("never had a chance").
_NOT_AFTER_CUE = word_set(
    'mind the a an my your our this that it been so too ever again happy fun good nice same sure right here there had was were '
    'did saw thought knew felt got been gonna going really quite up down out on off in for about with'
)
# Gerunds that are base forms ("always bring a charger"): any other -ing word after a cue is not a command.
_ING_VERBS = word_set('bring sing ring swing sting string spring wring ping')
# "Don't worry", "don't give up", "don't forget to have fun": reassurance and encouragement between people.
_NOT_AFTER_DONT = word_set('worry mind know think understand care get panic rush feel see remember bother forget let lose doubt hesitate')
# "Never give up", "don't quit", "don't miss a beat": encouragement, whichever cue opens it.
_ENCOURAGEMENT = word_set('quit miss sweat underestimate')
_ENCOURAGING_PHRASES = frozenset({('give', 'up'), ('settle', 'for'), ('say', 'never'), ('say', 'die')})
# "Don't be afraid to …", "never be shy": feelings, not a style ("don't be so formal" stays an instruction).
_FEELINGS = word_set('afraid scared shy sad nervous discouraged down hard worried upset sorry ashamed embarrassed a')
_STOP_OBJECT = word_set('it that this there now please by')
# "Keep it short", "keep your replies under 100 words" (not "keep it up", "keep going": encouragement).
_STYLE_COMPLEMENT = (
    r'(?:short|shorter|brief|briefer|concise|simple|simpler|formal|informal|casual|light|professional|friendly|polite|tight|'
    r'succinct|clear|plain|clean|under|below|within|to|in|at|more|less|precise|focused|high-level|technical|non-technical)\b'
)
_RESPONSE_STYLE = re.compile(
    r'^(?:respond|reply|answer|write|talk|speak|communicate)(?:\s+to me)?\s+(?:only\s+)?(?:in|using|with)\b'
    r'|^keep\s+(?:your\s+|the\s+|all\s+)?(?:responses|replies|answers|messages|explanations|summaries|emails)\b'
    rf'|^keep\s+(?:it|them|things)\s+(?:(?:very|really|nice and|short and)\s+)?{_STYLE_COMPLEMENT}',
    re.IGNORECASE,
)
# "Never use bullet points - I like prose", "Use metric units, I'm in Oslo": the speaker's own clause after the directive
# is a reason or a fact about them, not part of what the assistant is told to do.
_REASON_AFTER = re.compile(r"(?:\s[—–-]{1,2}\s|[—–]|,|;)\s*(?=(?:I|I'm|I've|I'd|we|we're|we've|my|our)\s)")
_STANDING = re.compile(r'\b(?:from now on|going forward|moving forward|from here on|in (?:the )?future|for future reference)\b', re.I)
_REPLY_NOUN = re.compile(r'\b(?:answers?|replies|reply|responses?|messages?|summaries|summary|explanations?|emails?|updates?)\b', re.I)
_MAX_VERBLESS_WORDS = 8
# A subject or an auxiliary: a sentence with a verb, which the cues above read or reject.
_NOT_VERBLESS = word_set(
    "i i'm i'll i've me my we we're our you you're it it's is are was were be been will would have has had do does did can "
    "could should let's"
)
_SUBORDINATE = re.compile(r'^(?:if|when|whenever|whatever|wherever|unless|for|in|before|after|once)\b[^,]{1,80},\s*', re.IGNORECASE)
_ABOUT_IT = re.compile(r'^(?:keep|make)\s+(?:it|this|that)\b', re.IGNORECASE)
_GENERIC_VERBS = word_set(
    'use avoid include add format label mark cite address refer sign start end begin prefix put give show list explain '
    'summarise summarize double-check check ask remind mention translate spell write respond reply answer'
)

_TOPICS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        'language',
        re.compile(
            r'\b(?:english|spanish|german|french|portuguese|italian|dutch|japanese|chinese|mandarin|korean|'
            r'polish|swedish|russian|arabic|hindi|language|spelling)\b',
            re.I,
        ),
    ),
    (
        'format',
        re.compile(
            r'\b(?:bullet|bullets|bullet points?|lists?|markdown|tables?|headings?|headers?|numbered|format|'
            r'formatting|code blocks?|json|plain text)\b',
            re.I,
        ),
    ),
    (
        'length',
        re.compile(
            r'\b(?:short|shorter|brief|briefer|concise|length|long|longer|sentences?|words|paragraphs?|verbose|'
            r'terse|succinct|detailed|detail)\b',
            re.I,
        ),
    ),
    ('tone', re.compile(r'\b(?:tone|formal|informal|casual|friendly|polite|professional|warm|serious|playful|blunt)\b', re.I)),
    (
        'style',
        re.compile(
            r'\b(?:jargon|emojis?|humou?r|sarcasm|exclamation|slang|technical terms|acronyms|passive voice|'
            r'metaphors?|swearing|profanity)\b',
            re.I,
        ),
    ),
    ('naming', re.compile(r'\b(?:call me|address me|refer to me|my name)\b', re.I)),
)
# "You should always stretch first": advice to a person, which is an instruction only when it is about the replies.
_ADVICE = re.compile(
    r"^(?:(?:and|but|also|oh|so|btw|plus|ok|okay)[\s,]+)*you\s+(?:should|must|need\s+to|have\s+to|gotta|'d\s+better|had\s+better|"
    r'ought\s+to|might\s+want\s+to)\b',
    re.IGNORECASE,
)
_CUES = word_set("always never ever don't dont do not stop please")
_LABEL_SKIP = word_set(
    "always never ever don't dont do not stop please you the a an my your me to of for in on with any all our their this that it them be"
)


def find_instruction(
    sentence: str, after_artefact_request: bool = False, spoken: str | None = None, among_people: bool = False
) -> ExtractedInstruction | None:
    """The directive in a sentence, if any. After a request for an artefact ("write me an announcement"), "keep it short"
    is about that artefact, not a standing instruction. ``sentence`` may have its cue words repaired ("Alwyas" →
    "Always"); the description is then taken from the same span of ``spoken``, the sentence as typed.

    Advice ("you should always bring an umbrella") and anything said between people talking to each other
    (``among_people``: a message with a named speaker) is chit-chat unless it is about the assistant's replies."""
    raw = body(sentence)
    core = _strip_trailing(_REASON_AFTER.split(_strip_trailing(_FILLERS.sub('', raw)), maxsplit=1)[0].strip(' ,;:'))
    if not core or not (_is_directive(core, raw) or _is_directive(_main_clause(core), raw)):
        return None
    if (among_people or _ADVICE.match(raw)) and not _about_the_replies(_main_clause(core)):
        return None
    if after_artefact_request and _ABOUT_IT.match(_main_clause(core)):
        return None
    if spoken is not None:
        start = raw.index(core)
        core = as_spoken(raw, body(spoken), start, start + len(core))
    return ExtractedInstruction(label=instruction_label(_main_clause(core))[:64], description=clip(capitalise(core), 1024))


def _about_the_replies(core: str) -> bool:
    """A directive about what the assistant writes: its verb is one of writing ("use", "answer", "cite") or it names the
    replies' language, format, length, tone or style."""
    verbs = [t.lower() for t in words(core) if t.lower() not in _CUES]
    if verbs and verbs[0] in _GENERIC_VERBS:
        return True
    return bool(_REPLY_NOUN.search(core)) or any(pattern.search(core) for _, pattern in _TOPICS)


def _strip_trailing(text: str) -> str:
    """ "Use metric units, please, going forward" → "Use metric units": trailing courtesies and persistence phrases."""
    end = len(text)
    while m := _TRAILING.search(text, max(0, end - _LONGEST_TRAILING), end):
        end = m.start()
        while end and text[end - 1] in ' \t,':
            end -= 1
    return text[:end]


def _main_clause(core: str) -> str:
    """ "If I ask for code, always use Python" → "always use Python" (the condition stays in the description)."""
    m = _SUBORDINATE.match(core)
    return core[m.end() :] if m else core


def _is_directive(core: str, raw: str) -> bool:
    tokens = [t.lower() for t in words(core)]
    if len(tokens) < 2:
        return False
    first, second = tokens[0], tokens[1]
    if first in ('always', 'never'):
        rest = _skip_ever(tokens[1:])
        return _imperative(rest) and rest[0] not in _NOT_AFTER_CUE
    if first in ("don't", 'dont') or tokens[:2] == ['do', 'not']:
        rest = _skip_ever(tokens[2:] if first == 'do' else tokens[1:])
        return bool(rest) and _imperative(rest) and rest[0] not in _NOT_AFTER_DONT and (len(tokens) > 2 or first == 'do')
    if first == 'stop':
        return second not in _STOP_OBJECT
    if _RESPONSE_STYLE.match(core):
        return True
    if first in _GENERIC_VERBS:
        return bool(_PERSISTENCE.search(raw) or any(pattern.search(core) for _, pattern in _TOPICS))
    return _verbless(tokens, core, raw)


def _verbless(tokens: list[str], core: str, raw: str) -> bool:
    """ "Bullet points for everything, from now on", "Short answers going forward": a standing wish about the replies
    with no verb, which only a persistence phrase makes a directive (and only about formatting, style, language, or the
    length and tone of replies: "long walks from now on" is a resolution, not an instruction)."""
    if len(tokens) > _MAX_VERBLESS_WORDS or not _STANDING.search(raw) or any(t in _NOT_VERBLESS for t in tokens):
        return False
    if any(pattern.search(core) for label, pattern in _TOPICS if label in ('format', 'style', 'language')):
        return True
    return bool(_REPLY_NOUN.search(core)) and any(pattern.search(core) for label, pattern in _TOPICS if label in ('length', 'tone'))


def _skip_ever(rest: list[str]) -> list[str]:
    """ "Never ever use emojis", "don't ever quit": the verb is the word after "ever"."""
    return rest[1:] if rest[:1] == ['ever'] and len(rest) > 1 else rest


def _imperative(rest: list[str]) -> bool:
    """The words after a cue read as a command about behaviour, not a past event, a state ("always staying …"),
    encouragement or a feeling."""
    verb = rest[0]
    if is_past_form(verb) or (verb.endswith('ing') and verb not in _ING_VERBS):
        return False
    if verb in _ENCOURAGEMENT or tuple(rest[:2]) in _ENCOURAGING_PHRASES:
        return False
    return not (verb == 'be' and len(rest) > 1 and rest[1] in _FEELINGS)


def instruction_label(description: str) -> str:
    """A short topic key: a known topic (language, format, length, tone, style, naming) or verb-object of the directive."""
    for label, pattern in _TOPICS:
        if pattern.search(description):
            return label
    content = [w.lower() for w in words(description) if w.lower() not in _LABEL_SKIP]
    if not content:
        return 'general'
    verb = lemma(content[0])
    return f'{verb}-{content[1]}' if len(content) > 1 else verb
