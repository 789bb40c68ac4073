"""Text plumbing for stage 0: normalising a turn, splitting it into sentences and clauses, cleaning captured values."""

from __future__ import annotations

import re
import unicodedata

from agent_memory.extraction.stage0.sentences import is_abbreviation

# A proper noun phrase: capitalised words, optionally joined by "of", "and", "&", "de"… (Acme Robotics, Bank of England).
# An abbreviation keeps its full stop inside a name ("St. Mary's Hospital", "J.P. Morgan", "Acme Inc.", "Mt. Sinai").
ABBREVIATED = r'(?:St|Mt|Ft|Dr|Mr|Mrs|Ms|Prof|Jr|Sr|Ltd|Inc|Co|Corp|Dept|Univ|Ave|Rd|Bros|Intl|Hosp|Gen|Sgt|Rev|Capt|Lt|Col)'
CAP_WORD = rf"{ABBREVIATED}\.(?=[\s,;:)]|$)|(?:[A-Z]\.){{2,}}|[A-ZÀ-ÖØ-Þ0-9][\w'&.-]*[\w&]|[A-ZÀ-ÖØ-Þ]"
# Always case-sensitive, also inside patterns compiled with IGNORECASE.
PROPER = rf'(?-i:(?:{CAP_WORD})(?:\s+(?:(?:of|and|&|de|da|do|del|la|le|van|von|der|den)\s+)?(?:{CAP_WORD}))*)'

_CLAUSE_BREAK = re.compile(
    r'\s*;\s*'
    r"|,?\s+(?:and|but|so|plus)\s+(?:now\s+|then\s+|also\s+)?(?=(?:I|I'm|I've|I'll|I'd|my|My|we|We|we're|We're)\b)"
    r"|,\s+(?=(?:I|I'm|I've|I'll|I'd|my|we|we're)\b|our\s+[\w-]+\s+[A-Z])"
    r"|,\s+(?=(?:since|as\s+of|starting)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:I|I'm|we|he|she)\s)"
    r"|,\s+and\s+(?=(?-i:[A-Z][a-z]+)\s+(?:is|'s|was|has)\s)"  # "Kaas is a Flemish giant, and Beschuit is a lop"
    r'|\s*[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*(?=\w)'  # an emoji between two statements ends the first
    r"|,\s+(?:and\s+)?(?=(?:he|she|he's|she's|hes|shes)\s)|\s+and\s+(?=(?:he's|she's|hes|shes|he\s+is|she\s+is)\s)"
    r'|\s*(?:\.\.\.+|…)\s*(?=\w)'
    r"|\s+and\s+then\s+(?=there's\s)|\s+(?=(?:she's|he's|shes|hes)\s+(?:like\s+|only\s+|just\s+)?\d)"
    r'|,\s+(?=(?:lives|works|living|working)\s+(?:in|at|for)\s)'
    r"|,\s+(?:and\s+)?(?:then\s+)?(?=there's\s)|:\s+(?=(?:my|our|I|I'm|we|we're)\s)"
    r"|,\s+(?:and|but|so|plus)\s+(?=(?:[a-z]+\s+){1,3}(?:I|I'm|I've|I'll|I'd|we|we're)\s)"
    r'|,\s*(?=(?:if|unless|in case|assuming)\b)'
    r'|,\s+(?:so|but)\s+(?=(?:that|it|this|they)\b)'
    r"|,?\s+(?:because|'cause|cause|since)\s+(?=(?:I|I'm|I've|we|we're|my)\s)"
    r"|,\s+(?:since|because)\s+(?:(?:this|last)\s+\w+\s+|then\s+|now\s+)?(?=(?:he|she|he's|she's)\s)"
    r"|\s+[—–-]{1,2}\s+(?=(?:I|I'm|I've|we|we're|my|it|it's|that|they|he|she)\b)"
    r'|,\s+(?=(?:moved|relocated)\s+(?:here|there|up|down|over|back|from|to)\b)'  # "I live in Leeds now, moved up from London …"
)
_SPACES = re.compile(r'\s+')
# "for three years", "for the past couple of years", "for almost a decade": how long a state has held.
DURATION = (
    r'for\s+(?:the\s+)?(?:(?:past|last)\s+)?(?:(?:almost|nearly|over|about|around|more\s+than)\s+)?'
    r'(?:(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of|couple\s+of|few|several|many)\s+)?'
    r'(?:years?|months?|decades?)'
)
MAX_NAME_CHARS, MAX_NAME_WORDS = 80, 6
_FIRST_PERSON_FIXES = {
    'i': 'I',
    "i'm": "I'm",
    'im': "I'm",
    'Im': "I'm",
    "i've": "I've",
    "i'll": "I'll",
    "i'd": "I'd",
    'ive': "I've",
    'Ive': "I've",
}
# The first person typed fast: lowercase, or "Im" / "Ive" with the capital but no apostrophe (neither is an English word).
_LOWER_I = re.compile(r"\b(?:i'm|i've|i'll|i'd|im|Im|ive|Ive|i)\b(?!['-])")
# A negation typed without its apostrophe ("cant stand", "dont", "doesnt"): none of these is an English word
_NO_APOSTROPHE = re.compile(r'\b(do|does|did|is|was|are|were|ca|wo|would|could|should|has|have|had)nt\b')
# Texting fillers a speaker drops into a statement ("radiohead tbh", "im a data analyst lol"): no part of any value.
_TEXTING = r'(?:tbh|tbf|ngl|imo|imho|fwiw|lol|lmao|rofl|smh|btw|rn|ha(?:ha)+|he(?:he)+)\b'
_TEXTING_FILLERS = re.compile(rf'^{_TEXTING}[\s,.!:;-]*|\s+{_TEXTING}', re.IGNORECASE)

LEADING_FILLERS = re.compile(
    r'^(?:(?:ok(?:ay)?|so|and|but|also|oh|hey(?: there)?|hi(?: there)?|hello|anyway|btw|by the way|quick update|update|fyi|'
    r'honestly(?: though)?|basically|right now|right|alright|yes|yeah|no|well|plus|then|note|ps|heads up|good news|great news|big news|'
    r'news|fun fact|side note|these days|nowadays|right now|at the moment|what can i say|guess what|you know what|'
    r'(?:now|currently|actually|in fact|since then|in my (?:free|spare) time|in (?:the )?weekends?|on (?:the )?weekends?|at weekends|'
    r'most (?:days|nights|mornings|evenings|weekends))(?=[\s,]+(?:i|i\'m|we|we\'re)\b)|'
    r"(?:i think|i guess|i believe|i suppose|i'd say|you know|(?:that's|that is|this is|which is|it's|and that's) why|"
    r"(?:it|this|that|they|which)?\s*remind(?:s|ed)? me (?:of )?why)(?=\s+(?:i|i'm|i've|my|we|we're)\b))\b[\s,:;!.-]*)+",
    re.IGNORECASE,
)
# Where a captured value ends: clause punctuation, or a word that starts a new thought.
_LEADING_SYMBOLS = re.compile(r'^[^\w"\'(]+')  # "😊 My name is Luiza": an emoji or a bullet opening the sentence
_VALUE_END = re.compile(
    r'\s*(?:[,;()!?]|:(?!\S)|\s[—–-]{1,2}\s|[—–]|(?<=\w)-{1,2}\s|\.\s|\.$)'
    r"|\s+(?:because|since|but|although|though|which|who|whom|where|whereas|so that|if|unless|when|while|for what it's worth|"
    r'right now|at the moment|currently|these days|nowadays|now|anymore|any more|either|too|as well|by the way|btw|'
    r'most (?:days|nights|mornings|evenings|weekends)|every (?:day|night|morning|evening|week|weekend|saturday|sunday)|'
    r'twice a|once a|(?:two|three|four) times|daily|weekly|with (?:colleagues|friends|my)|'
    r'fluently|natively|really|actually|haha|lol|and\s+(?:just|also|then|now|it|it\'s|that|that\'s|this|they|they\'re))\b',
    re.IGNORECASE,
)
# "the Pro plan" → "Pro plan", but "The Hobbit" and "The Beatles" keep the capitalised article of their name.
_LEADING_ARTICLE = re.compile(r'^(?:(?i:a|an)\s+|the\s+|The\s+(?![A-Z]))')
_CONJUNCTIONS = frozenset({'and', 'or', 'but'})
_EDGE = ' \t,.;:!?"\'“”‘’*'


def normalise_text(text: str) -> str:
    """NFC, straight quotes, single spaces inside lines, and the lowercase first person of casual typing ("i", "im")."""
    text = unicodedata.normalize('NFC', text).replace('’', "'").replace('‘', "'").replace('“', '"').replace('”', '"')
    text = _LOWER_I.sub(lambda m: _FIRST_PERSON_FIXES[m.group(0)], text)
    text = _NO_APOSTROPHE.sub(lambda m: f"{m.group(1)}n't", text)
    return '\n'.join(_SPACES.sub(' ', line).strip() for line in text.splitlines())


def without_texting_fillers(sentence: str) -> str:
    return _TEXTING_FILLERS.sub('', sentence).strip()


def split_clauses(sentence: str) -> list[str]:
    parts = (p.strip(' ,') for p in _CLAUSE_BREAK.split(body(sentence)))
    return [p for p in parts if p]


def body(sentence: str) -> str:
    """The sentence without its closing punctuation."""
    return _LEADING_SYMBOLS.sub('', sentence.strip().rstrip('.!?… ')).strip()


def strip_fillers(clause: str) -> str:
    return LEADING_FILLERS.sub('', clause).strip()


def clean_value(raw: str) -> str:
    """Cut a captured value at the end of its phrase and drop edge punctuation and a leading article."""
    match = next((m for m in _VALUE_END.finditer(raw) if not _after_abbreviation(raw, m)), None)
    value = raw[: match.start()] if match else raw
    head, _, last = value.strip(_EDGE).rpartition(' ')
    value = head if head and last.lower() in _CONJUNCTIONS else value  # "a travel club and, like I said, …"
    return _LEADING_ARTICLE.sub('', value).strip(_EDGE)


def _after_abbreviation(raw: str, end: re.Match[str]) -> bool:
    """A full stop that closes a title, an initial or an abbreviation inside a name ("Dr. J. R. Tamsett", "St. Mary's")."""
    if end.group(0).strip() != '.' or end.end() >= len(raw) or not raw[end.end()].isalnum():
        return False
    if re.match(r"I\b|I'", raw[end.end() :]):
        return False  # "Paws & Co. I love it": the next sentence
    word = re.search(r'(?:[A-Za-z]\.)*[A-Za-z]+$', raw[max(0, end.start() - 12) : end.start()])
    return word is not None and is_abbreviation(word.group(0))


def clip(text: str, limit: int) -> str:
    """Bound free text taken from a turn to a model field's length."""
    return text if len(text) <= limit else text[: limit - 1] + '…'


def is_plausible_name(name: str) -> bool:
    """A captured proper noun short enough to be one name (a run of 4,000 capitalised words is not)."""
    return len(name) <= MAX_NAME_CHARS and len(name.split()) <= MAX_NAME_WORDS


def squash(text: str) -> str:
    """Tidy a clause after a phrase was cut out of it."""
    text = re.sub(r'\s+([,.;:!?])', r'\1', _SPACES.sub(' ', text))
    return text.strip(' ,;:-—–')


def words(text: str) -> list[str]:
    return re.findall(r"[\w'-]+", text)


def slug(text: str) -> str:
    return re.sub(r'[^a-z0-9]+', '_', text.casefold()).strip('_')


def capitalise(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text
