"""What someone likes, dislikes, prefers and plays: the preference readers of stage 0.

A lasting preference is generic ("I love gardens", "I'm passionate about dance", "Harry Potter is my favorite book");
a reaction to one particular thing in the conversation ("I love your garden", "I love the colours" after a compliment,
"I like the idea") is not recorded: its referent lives in another sentence or another speaker's turn.
"""

from __future__ import annotations

import re

from agent_memory.extraction.stage0.claim import PRONOUN_OBJECT, Claim, match
from agent_memory.extraction.stage0.lexicon import word_set
from agent_memory.extraction.stage0.text import clean_value

_PARTICULAR = re.compile(r'^(?:all\s+the|this|that|these|those|your|his|her|their)\s+(?-i:[a-z])', re.IGNORECASE)
# "the energy", "the idea and the acting", "the structure of the language": a quality of something named elsewhere.
_ASPECT = re.compile(
    r'^the\s+(?:[\w-]+\s+)?(?:energy|idea|ideas|acting|structure|colou?rs?|textures?|vibes?|atmosphere|design|look|looks|sound|'
    r'view|views|taste|smell|concept|message|theme|story|plot|plots|details?|way|feel|feeling|feelings|style|effects|'
    r'characters?|writing|scenery|sky|lighting|shape|pattern|patterns|layout|ending|passion|dedication|thought)\b',
    re.IGNORECASE,
)
_LIKED_LEAD = re.compile(r'^(?:(?:very|so)\s+much\s+|a\s+lot\s+)?(?:to\s+)?(?:(?:just|really|both|also|simply)\s+)*', re.IGNORECASE)
_ADVERBS = (
    r'(?:(?:really|also|absolutely|totally|just|do|genuinely|truly|kind of|kinda|quite|generally|usually|still|actually|'
    r'definitely|much|personally|both)\s+)*'
)
_LIKE_VERBS = {'like': 'likes', 'love': 'likes', 'enjoy': 'likes', 'adore': 'likes', 'prefer': 'preference'}
_FAN = r'(?:(?:a|an)\s+)?(?:(?:big|huge|massive|real|great|total|really|so)\s+)?(?:fan\s+of|into|all\s+about|keen\s+on|obsessed\s+with)'
_PASSIONATE = r'(?:(?:really|so|very|truly|deeply|super)\s+)?passionate\s+about'
# "Harry Potter is my favorite book", "Dance is my passion", "Spider-Man has always been a favorite of mine",
# "Sci-fi is more my thing, especially …".
_FAVOURITE_OF_MINE = re.compile(
    r'^(?:[^:]{1,80}:\s+)?(?P<x>[^:;]+?)\s+(?:is|are|has\s+always\s+been|have\s+always\s+been)\s+(?:(?:definitely|still|also|now|probably)\s+)?'
    r'(?:(?:one\s+of\s+my\s+(?:all-time\s+)?favou?rites|a\s+favou?rite\s+of\s+mine|my\s+(?:all-time\s+)?favou?rite|my\s+passion|'
    r'(?:more\s+|really\s+|totally\s+)?my\s+(?:thing|jam|cup\s+of\s+tea))'
    r'|my\s+(?:all-time\s+)?(?P<k>favou?rite\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?))'
    r'(?:\s+(?:too|ever|of\s+all\s+time))?(?:,\s+(?:especially|particularly|mostly|above\s+all)\b.*)?$',
    re.IGNORECASE,
)
# "Cilantro I absolutely can't stand", "Jazz I really love": the object said first, the verb closing the clause.
_TOPICALISED = re.compile(
    rf'^(?P<x>[^,;:]{{1,60}}?)\s+(?P<s>I|we)\s+{_ADVERBS}'
    r"(?P<verb>love|like|adore|enjoy|hate|dislike|detest|loathe|can't stand|cannot stand|can't bear|don't like|do not like)$",
    re.IGNORECASE,
)
_NOT_A_TOPIC = word_set(
    'sometimes often always never usually now then today yesterday tonight still also even just really so and but or because '
    'when while if though although which what who how why where there here yes no maybe well oh and to for of in on at with me you'
)
_NOT_A_THING = re.compile(r"^(?:it|it's|that|this|these|those|they|he|she|what|which|who|here|there|mine|one|so|and)\b", re.I)
_FIRST_PERSON_INSIDE = re.compile(r"\b(?:I|I'm|I've|me|we|us)\b")
_PLAYED = re.compile(r'^(?:with|a\s+lot|for|around|along|against|in|on|at|it|that|this|them|games?\s+with|some|together)\b', re.I)


def preference(text: str) -> list[Claim]:
    """ "I love hiking", "I can't stand cilantro", "I've always liked turtles" (not "I'm enjoying my
    new job": a present experience, not a lasting preference)."""
    m = match(
        rf'^(?:i|we)\s+{_ADVERBS}(?P<verb>prefer|like|love|enjoy|adore|hate|dislike|detest|loathe|can\'t stand|'
        r"cannot stand|can't bear|don't like|do not like|don't enjoy|don't love)\s+(?P<v>.+)$",
        text,
    )
    m = m or match(
        r"^(?:(?:i|we)(?:'ve|\s+have)\s+always\s+(?:liked|loved|enjoyed)|(?:i|we)\s+will\s+always\s+(?:love|like|enjoy))\s+(?P<v>.+)$",
        text,
    )
    if not m:
        return []
    value = liked(m.group('v'))
    if not value or PRONOUN_OBJECT.match(value) or match(r'^(?:being|to be) called\b', value):
        return []
    verb = (m.groupdict().get('verb') or 'like').lower()
    return [Claim(_LIKE_VERBS.get(verb, 'dislikes'), value)]


DRINKS = (
    r'(?:(?:black|white|iced|decaf(?:feinated)?|regular|filter|instant|green|black|herbal|mint|oat|soy|almond|sparkling|red|white|'
    r'craft|cold|hot|strong|weak)\s+)*(?:coffee|tea|decaf|espresso|latte|lattes|cappuccino|flat\s+white|americano|rooibos|chai|'
    r'matcha|earl\s+grey|water|juice|milk|beer|wine|whisky|whiskey|gin|vodka|rum|cider|kombucha|smoothies?|soda|cola|'
    r'hot\s+chocolate)'
)
_DRINKING = re.compile(
    rf'^(?:i|we)\s+(?:(?:only|mostly|just|now|also)\s+)*(?:drink|take|have|switched\s+to|moved\s+(?:over\s+)?to|changed\s+to)\s+'
    rf'(?:(?:only|mostly|just)\s+)?(?P<v>{DRINKS})\b',
    re.IGNORECASE,
)


def drinks(text: str) -> list[Claim]:
    """ "I drink only espresso now", "(I) switched to green tea": what someone drinks is something they like."""
    m = _DRINKING.match(text)
    return [Claim('likes', ' '.join(m.group('v').split()))] if m else []


def unnamed_favourite(text: str) -> list[Claim]:
    """ "My favorite is the banana split sundae": the favourite of an unnamed kind is still something liked."""
    m = match(r'^(?:my|our)\s+(?:all-time\s+|absolute\s+)?favou?rite\s+is\s+(?P<v>.+)$', text)
    value = liked(m.group('v')) if m else ''
    return [] if _NOT_A_THING.match(value) else _named('likes', value)


def liked(raw: str) -> str:
    """What is liked, without an infinitive marker or a leading adverb ("to just watch the sunset" → "watch the sunset").

    Empty for one particular thing ("I love all the colours!", "I love your garden", "I love the energy"): a reaction to
    something in the conversation, not a lasting preference; a lasting one is generic ("I love gardens") or a name.
    """
    if _PARTICULAR.match(raw) or _ASPECT.match(raw):
        return ''
    return _LIKED_LEAD.sub('', clean_value(raw))


def enthusiasm(rest: str) -> list[Claim]:
    """After "I'm" or "I've always been": "a big fan of X", "into X", "all about X", "keen on X", "passionate about X"."""
    m = match(rf'^(?:{_FAN}|{_PASSIONATE})\s+(?P<v>.+)$', rest)
    return _named('likes', liked(m.group('v')) if m else '')


def long_held(text: str) -> list[Claim]:
    """ "I've always been passionate about veterans' rights", "I've been into dancing since I was a kid"."""
    if m := match(r"^(?:i|we)(?:'ve|\s+have)\s+(?:always\s+|long\s+|really\s+)?been\s+(?:really\s+|so\s+)?(?P<rest>.+)$", text):
        return enthusiasm(m.group('rest'))
    m = match(r"^(?:i|we)(?:'ve|\s+have)\s+always\s+had\s+a\s+(?:love|passion|soft\s+spot)\s+for\s+(?P<v>.+)$", text)
    return _named('likes', liked(m.group('v')) if m else '')


def not_a_fan(rest: str) -> list[Claim]:
    m = match(r'^not\s+(?:(?:a|an)\s+)?(?:(?:big|huge|great|massive)\s+)?fan\s+of\s+(?P<v>.+)$', rest)
    return _named('dislikes', clean_value(m.group('v')) if m else '')


def plays(text: str) -> list[Claim]:
    """ "I play clarinet", "I usually play CS:GO" (not "I play with my kids", "I play a lot")."""
    m = match(r'^(?:i|we)\s+(?:(?:usually|also|still|mostly|often|sometimes|really|just|mainly)\s+)*play\s+(?:the\s+)?(?P<v>.+)$', text)
    value = clean_value(m.group('v')) if m and not _PLAYED.match(m.group('v')) else ''
    return [Claim('plays', value)] if value and len(value.split()) <= 4 else []


def _named(key: str, value: str) -> list[Claim]:
    """A claim when the value names its thing ("it", "that", "the idea" name nothing here)."""
    return [Claim(key, value)] if value and not PRONOUN_OBJECT.match(value) else []


def favourite_as_first_person(clause: str) -> str | None:
    """ "Harry Potter is my favorite book" → "my favorite book is Harry Potter"; "Dance is my passion" → "I love Dance"."""
    m = _FAVOURITE_OF_MINE.match(clause)
    if not m or _NOT_A_THING.match(m.group('x')) or len(m.group('x').split()) > 8 or _FIRST_PERSON_INSIDE.search(m.group('x')):
        return None
    return f'my {m.group("k")} is {m.group("x")}' if m.group('k') else f'I love {m.group("x")}'


def topicalised_as_first_person(clause: str) -> str | None:
    """ "Cilantro I absolutely can't stand" → "I can't stand Cilantro" (a clause ending on its verb put its object first)."""
    m = _TOPICALISED.match(clause)
    if not m:
        return None
    topic = m.group('x').split()
    if len(topic) > 5 or _NOT_A_THING.match(m.group('x')) or any(w.lower() in _NOT_A_TOPIC for w in topic):
        return None
    return f'{m.group("s")} {m.group("verb")} {m.group("x")}'
