"""First-person statements → attribute claims: identity, preferences, plans, key-value facts and current context.

Every pattern reads a clause already in first person (see ``subjects.to_first_person``) with fillers and the time
phrase removed. Keys and categories (documented in ``tests/extraction_corpus/README.md``):

* identity: name, preferred_name, title, employer, location, hometown, language, age, diet, allergy; likes / dislikes /
  preference and plays (persistent preferences are identity, CONTRACT §5, read in ``preferences``); timezone, email,
  pronouns… when stated as "my <key> is".
* knowledge: plan, goal / dream ("my goal is to …"), and any other "my <key> is <value>".
* context: current_location, working_on, working_from, reading, volunteering, status (a project's status is knowledge).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

from agent_memory.extraction.stage0.claim import IDENTITY_KEYS, PRONOUN_OBJECT, Claim, match
from agent_memory.extraction.stage0.lexicon import (
    DEPARTMENTS,
    LANGUAGES,
    NATIONALITIES,
    NOT_NAMES,
    ORG_SUFFIXES,
    SPORT_GERUNDS,
    SPORTS,
    TIER_WORDS,
    word_set,
)
from agent_memory.extraction.stage0.people import NUMBER_WORDS, PERSON_RELATIONS, number_word
from agent_memory.extraction.stage0.preferences import drinks, enthusiasm, long_held, not_a_fan, plays, preference, unnamed_favourite
from agent_memory.extraction.stage0.text import DURATION, PROPER, clean_value, is_plausible_name, slug
from agent_memory.extraction.stage0.titles import split_title, without_honorific

_NAME_KEYS = frozenset({'name', 'preferred_name', 'employer', 'location', 'hometown', 'current_location', 'manager'})
_MAX_KEY_CHARS, _MAX_VALUE_CHARS = 64, 200
_KEY_ALIASES = {
    'job': 'occupation',
    'job_title': 'occupation',
    'role': 'occupation',
    'position': 'occupation',
    'occupation': 'occupation',
    'profession': 'occupation',
    'title': 'occupation',
    'e_mail': 'email',
    'work_email': 'email',
    'work_e_mail': 'email',
    'email': 'email',
    'company': 'employer',
    'employer': 'employer',
    'city': 'location',
    'home_town': 'hometown',
    'hometown': 'hometown',
    'tier': 'plan',
    'subscription': 'plan',
    'plan': 'plan',
    'subscription_plan': 'plan',
    'time_zone': 'timezone',
    'timezone': 'timezone',
    'name': 'name',
    'first_name': 'name',
    'full_name': 'name',
    'nickname': 'preferred_name',
    'email_address': 'email',
    'phone_number': 'phone',
    'mother_tongue': 'native_language',
    'first_language': 'native_language',
}
_GENERIC_KEY_STOPLIST = word_set(
    'question point guess concern problem issue worry idea hope thought thinking understanding bad pleasure fault excuse answer '
    'suggestion take opinion feeling impression day week life head back mind heart gut bet advice experience fear dream '
    'laptop computer phone flight train car internet connection wifi app account screen code build test job'
)
_KEY_PREFIXES = (
    'favourite',
    'favorite',
    'preferred',
    'usual',
    'main',
    'primary',
    'home',
    'native',
    'work',
    'personal',
    'billing',
    'go-to',
    'default',
    'current',
)
_VALUE_REJECT = re.compile(
    r'^(?:not|so|very|really|too|quite|pretty|kind|a bit|being|getting|going|that|whether|to|if|how|what|why|when|where|in|on|at|'
    r'from|still|also|just|gone|down|up|out|here|there|over|done|fine|ok|okay|great|good|bad|broken|delayed|late|slow|dead|sick|'
    r'ill|busy|away|off|back|always|never|almost|about|probably|like)\b',
    re.IGNORECASE,
)
_STATUSES = (
    'on hold|behind schedule|ahead of schedule|on track|on schedule|blocked|delayed|cancelled|canceled|live|done|complete|completed|'
    'finished|paused|at risk|over budget|under budget|in progress|in review|shipped|launched'
)
_ADVERBS = r'(?:(?:just|recently|finally|already|have|also|currently|still|now|really|actually)\s+)*'
_LEADING_ADVERBS = re.compile(
    r'^(?:(?:now|currently|still|also|officially|actually|finally|technically|basically|essentially|effectively|kind of|sort of)\s+)+',
    re.IGNORECASE,
)
_KEY_MODIFIERS = re.compile(r'^(?:(?:new|current|updated|actual|official|latest)\s+)+')
_AIMS = 'goal|dream|aim|ambition|mission'
_VAGUE_WORK = re.compile(
    r'^(?:(?:a|an|the|my|our|some|new|big|little|small|side|secret|fun|cool|personal|exciting|different|few|couple\s+of)\s+)*'
    r'(?:project|projects|thing|things|something|stuff|one|ones|it|that|this|them|for|lately|hard)\b',
    re.IGNORECASE,
)
_FUNCTION_WORDS = word_set('to it that this them so too do does one ones there here the a an and or of for with me you up out')
_PREFERENCE_KEYS = frozenset({'likes', 'dislikes', 'preference'})
_DANGLING = re.compile(r'\b(?:it|they|them|this|that|these|those|he|she|him|her)\b', re.IGNORECASE)
_UNNAMED_PLACE = (
    r'(?:a|an|the)\s+(?:(?:small|little|tiny|big|quiet|remote|rural|coastal|fishing|farming|mountain)\s+)*'
    r'(?:village|town|city|suburb|place|island|farm|hamlet)\s+(?:(?:just|right)\s+)?'
    r'(?:near|outside(?:\s+of)?|close\s+to|in|on|north\s+of|south\s+of|east\s+of|west\s+of)\s+'
)
# "a fintech called Ledgerly", "a small agency named Northpass": an organisation introduced by its kind, then its name.
_UNNAMED_ORG = (
    r'(?:a|an|this|the)\s+(?:[\w-]+\s+){0,2}?(?:startup|start-up|scale-up|scaleup|company|firm|fintech|agency|studio|shop|bank|'
    r'consultancy|nonprofit|non-profit|charity|business|outfit|brand|lab|insurer|retailer|publisher|school|hospital|clinic|'
    r'restaurant|bakery|cafe|café|place|team|org|organisation|organization|supermarket|store|brewery|hotel|newspaper|magazine)\s+'
    r'(?:called|named)\s+'
)
_DEPARTMENT = '|'.join(sorted(DEPARTMENTS | {'backend', 'frontend', 'dev', 'development', 'engineering', 'programming', 'coding'}))
_WORK = (
    r'(?:\s+(?:(?:currently|still|now|also)\s+)?work(?:\s+(?:part[\s-]time|full[\s-]time|remotely|mornings|evenings|nights|weekends))?'
    r"|(?:'ve|\s+have)\s+(?:also\s+)?(?:worked|been\s+working))"
)
# "I work at Acme", "I've worked for a startup called Brightpath", "I do backend stuff at a fintech called Ledgerly".
_WORK_AT = (
    rf'^(?:i|we)(?:{_WORK}|\s+do\s+(?:[\w-]+\s+){{0,3}}?(?:stuff|work|things|{_DEPARTMENT}))\s+'
    rf'(?P<prep>at|for|in|by|with)\s+(?:the\s+)?(?:{_UNNAMED_ORG})?(?P<org>{PROPER})(?P<tail>.*)$'
)
# "I've been at Northwind for three years": being at an organisation for years is working there (a visit is days).
_BEEN_AT = (
    rf"^(?:i|we)(?:'ve|\s+have)\s+been\s+(?:at|with)\s+(?P<org>{PROPER})\s+"
    rf'{DURATION}\b'
)
_HAVE_LIVED = r"(?:'ve|\s+have)\s+(?:been\s+living|lived)"
_KEY_VERB = r"(?:is(?:\s+now)?|are|'s|(?:has\s+)?changed\s+to|is\s+changing\s+to)"
_TAIL_BREAK = re.compile(r'\s*(?:,|;|\s[—–-]{1,2}\s|[—–])\s*')
_MAX_TAIL_PARTS = 4
_NUMBER_WORDS = NUMBER_WORDS
_DIETS = r'vegetarian|veggie|vegan|pescatarian|pescetarian|gluten-free|lactose intolerant|kosher|halal|coeliac|celiac|teetotal'


def find_claims(text: str, is_self: bool) -> list[Claim]:
    """All claims the clause states (a clause may state several: "I work at Acme as a data engineer")."""
    found: list[Claim] = []
    for reader in _READERS:
        found += reader(text)
    if is_self:
        found += _preferred_name(text)
    else:
        found = [c for c in found if c.key not in ('name', 'preferred_name')]
    return [c for c in dict.fromkeys(_titled(found)) if _plausible(c)]


def _titled(claims: list[Claim]) -> list[Claim]:
    """ "I am Dr. Matthias Brandauer": the name without the honorific, which is the ``title``."""
    out: list[Claim] = []
    for claim in claims:
        title, name = without_honorific(claim.value) if claim.key in ('name', 'preferred_name') else (None, claim.value)
        out += [Claim('title', title), replace(claim, value=name)] if title and name.strip() else [claim]
    return out


def _plausible(claim: Claim) -> bool:
    if len(claim.key) > _MAX_KEY_CHARS or len(claim.value) > _MAX_VALUE_CHARS:
        return False
    if all(w.lower() in _FUNCTION_WORDS for w in claim.value.split()):
        return False  # "I love to." → not a value at all
    if claim.key in _PREFERENCE_KEYS and _DANGLING.search(claim.value):
        return False  # "the freedom and connection it brings": what "it" is lives in another sentence
    return is_plausible_name(claim.value) if claim.key in _NAME_KEYS else True


def _proper(text: str) -> str | None:
    m = re.match(PROPER, text.strip())
    return m.group(0) if m else None


# ------------------------------------------------------------------------------------------------ "I'm …"


def _i_am(text: str) -> list[Claim]:
    m = match(r"^(?:i'm|i am)\s+(?P<rest>.+)$", text)
    if not m:
        return []
    if match(r'^still\s+in\s+', m.group('rest')):
        return _in_city(m.group('rest'))
    rest = _LEADING_ADVERBS.sub('', m.group('rest'))
    if match(r'^(?:not|no longer|never)\b', rest):
        return not_a_fan(rest)
    for reader in _AFTER_I_AM:
        if claims := reader(rest):
            return claims
    return _title(rest) or _age(rest) or _name(rest)


_AGE = re.compile(
    rf'^(?:(?:like|only|just|now|turning|about)\s+)?(?P<v>\d{{1,3}}|{_NUMBER_WORDS})'
    r'(?:\s*(?:years?|yrs?|y\.?o\.?)(?:\s+(?:old|of\s+age))?|-years?-old)?(?:\s+(?:now|already|this year|lol|haha))?'
    r'\s*(?:$|,|\b(?:and|so|but)\b|!)',
    re.IGNORECASE,
)


def _age(rest: str) -> list[Claim]:
    """ "I'm 34", "he's only 1", "she is 5 years" (the number said, a number word as digits)."""
    m = _AGE.match(rest)
    if not m:
        return []
    value = number_word(m.group('v'))
    return [Claim('age', value)] if value.isdigit() and 0 < int(value) < 130 else []


def _teaching(text: str) -> list[Claim]:
    """ "I teach maths", "(he) teaches chemistry at Larkspur High": what someone does for a living, as said."""
    m = match(rf'^i\s+teach(?:es)?\s+(?P<v>[a-z][a-z -]{{1,40}}?)(?:\s+(?:at|in)\s+(?P<org>{PROPER}))?\s*$', text)
    if not m or m.group('v').split()[0].lower() in _FUNCTION_WORDS | {'them', 'him', 'her', 'kids', 'children', 'people'}:
        return []
    return [Claim('occupation', f'teaches {m.group("v").strip()}'), *([Claim('employer', m.group('org'))] if m.group('org') else [])]


def _nationality(rest: str) -> list[Claim]:
    """ "I'm German", "(she is) Dutch": a nationality said of someone."""
    m = match(
        r'^(?:(?:a|an|originally|half)\s+)?(?P<v>[a-z]+(?:\s+[a-z]+)?)(?:\s+(?:citizen|national))?\s*(?:$|,|!|\.|\band\b|\bby\b)', rest
    )
    if not m:
        return []
    value = m.group('v').lower()
    if value not in NATIONALITIES:
        value = value.split()[0]
        if value not in NATIONALITIES:
            return []
    return [Claim('nationality', ' '.join(w.capitalize() for w in value.split()))]


def _years_had(text: str) -> list[Claim]:
    """ "I have 29 years" (Spanish and Portuguese speakers): an age."""
    m = match(r'^i\s+have\s+(?P<v>\d{1,3})\s+years\b(?!\s+(?:of|experience|in|at|ago))', text)
    return [Claim('age', m.group('v'))] if m and 0 < int(m.group('v')) < 130 else []


def _allergies(text: str) -> list[Claim]:
    """ "I have an allergy to shrimp and also to crab", "I have allergy for peanuts": each thing is an allergy."""
    m = match(
        r"^(?:i|we)\s+(?:have|'ve\s+got|have\s+got|got)\s+(?:an?\s+|severe\s+|bad\s+)*allerg(?:y|ies)\s+(?:to|for|against)\s+(?P<v>.+)$",
        text,
    )
    return _each_allergy(m.group('v')) if m else []


def _each_allergy(said: str) -> list[Claim]:
    parts = re.split(r'\s*(?:,|\band\s+(?:also\s+)?(?:to|for)\b|\band\b|\bor\b)\s*', said)
    values = [clean_value(re.sub(r'^(?:(?:also|to|for)\s+)+', '', p.strip(), flags=re.I)) for p in parts[:6]]
    values = [v for v in values if not re.fullmatch(r'\w+ly|though|too|sadly|unfortunately|sometimes|etc', v, re.I)]
    return [Claim('allergy', v) for v in values if v and len(v.split()) <= 4 and not PRONOUN_OBJECT.match(v)]


def _diet(rest: str) -> list[Claim]:
    m = match(rf'^(?:(?:a|an)\s+)?(?:(?:strict|full|total)\s+)?(?P<v>{_DIETS})\b', rest)
    return [Claim('diet', m.group('v').lower())] if m else []


def _diet_kept(text: str) -> list[Claim]:
    """ "I've gone dairy-free", "my husband went vegan", "I keep to a strictly gluten-free diet": a diet taken up."""
    m = match(
        rf"^(?:i|we)(?:'ve|\s+have)?\s+(?:(?:just|recently|now)\s+)?(?:gone|went|turned|go)\s+(?P<v>{_DIETS}|dairy-free)\b", text
    ) or match(
        rf'^(?:i|we)\s+(?:keep\s+to|follow|stick\s+to|eat|keep)\s+(?:a\s+)?(?:(?:strictly|strict|mostly|fully)\s+)?'
        rf'(?P<v>{_DIETS}|dairy-free)(?:\s+diet)?\b',
        text,
    )
    return [Claim('diet', m.group('v').lower(), change=True)] if m else []


def _allergy(rest: str) -> list[Claim]:
    m = match(r'^(?:very\s+|severely\s+|mildly\s+|deathly\s+|super\s+)?allergic\s+(?:to|for|against|at)\s+(?P<v>.+)$', rest)
    if m:
        return _each_allergy(m.group('v'))
    m = match(r'^(?:also\s+)?intolerant\s+(?:to|of)\s+(?:the\s+)?(?P<v>lactose|gluten|dairy|fructose|histamine|wheat)\b', rest)
    return [Claim('allergy', m.group('v').lower())] if m else []


def _plan_membership(rest: str) -> list[Claim]:
    m = match(
        r'^(?:on|subscribed to|using)\s+(?:the\s+|a\s+|an\s+)?(?P<v>[\w-]+(?:\s+[\w-]+)?)\s+(?:plan|tier|subscription|package|edition)\b',
        rest,
    )
    return [Claim('plan', m.group('v'))] if m else []


def _based_in(rest: str) -> list[Claim]:
    m = match(r'^(?:currently\s+|now\s+)?(?:based|located|living|headquartered)\s+in\s+(?P<v>.+)$', rest)
    place = _proper(m.group('v')) if m else None
    return [Claim('location', place)] if place else []


def _origin(rest: str) -> list[Claim]:
    """ "from Sofia", "from a small village near Cork" (the named place is what a listener would note)."""
    m = match(rf'^(?:originally\s+)?from\s+(?:{_UNNAMED_PLACE})?(?P<v>.+)$', rest)
    place = _proper(m.group('v')) if m else None
    return [Claim('hometown', place)] if place else []


def _working(rest: str) -> list[Claim]:
    m = match(r'^(?:currently\s+|still\s+|now\s+)?working\s+(?:hard\s+)?(?P<how>on|from)\s+(?P<v>.+)$', rest)
    value = clean_value(m.group('v')) if m else ''
    if not m or not value or (m.group('how').lower() == 'on' and _VAGUE_WORK.match(value)):
        return []  # "a new project", "something exciting", "one with my group": what it is was said elsewhere, or not at all
    return [Claim(f'working_{m.group("how").lower()}', value)]


def _pursuit(rest: str) -> list[Claim]:
    """ "(I'm) reading "The Lean Startup"", "(I'm) volunteering at a homeless shelter": what someone is doing these days."""
    if m := match(rf'^(?:currently\s+|still\s+|now\s+)?reading\s+(?:"(?P<quoted>[^"]{{1,80}})"|(?P<name>{PROPER}))', rest):
        return [Claim('reading', m.group('quoted') or m.group('name'))]
    m = match(r'^(?:currently\s+|still\s+|now\s+)?volunteering\s+(?:at|as|with|for)\s+(?P<v>.+)$', rest)
    value = clean_value(m.group('v')) if m else ''
    return [Claim('volunteering', value)] if value and not PRONOUN_OBJECT.match(value) else []


def _been_doing(text: str) -> list[Claim]:
    """ "I've been working on my online store", "I've been volunteering at a shelter"."""
    m = match(r"^(?:i|we)(?:'ve|\s+have)\s+(?:also\s+|really\s+|just\s+)?been\s+(?P<rest>(?:working|volunteering)\s.+)$", text)
    return [*_working(m.group('rest')), *_pursuit(m.group('rest'))] if m else []


def _aim(text: str) -> list[Claim]:
    """ "My goal is to improve my shooting": the aim without its infinitive marker (a generic value may not start with "to")."""
    m = match(rf'^(?:my|our)\s+(?:(?:main|big|biggest|ultimate|long-term)\s+)?(?P<k>{_AIMS})\s+is\s+to\s+(?P<v>.+)$', text)
    value = clean_value(m.group('v')) if m else ''
    return [Claim(m.group('k').lower(), value)] if m and len(value.split()) > 1 else []


def _at_place(rest: str) -> list[Claim]:
    m = match(r'^(?:currently\s+)?at\s+(?P<v>(?:the|a|an|home|work|my|our)\b.+)$', rest)
    value = clean_value(m.group('v')) if m else ''
    if value.split()[-1:] and value.split()[-1].lower() in ORG_SUFFIXES:
        return []  # "I'm still at the surgery": where someone works, or just is right now; not said which
    return [Claim('current_location', value)] if value else []


def _in_city(rest: str) -> list[Claim]:
    """ "I'm in Lisbon this week"; "Since this Monday I am in Deltaflow Analytics" is where someone works."""
    m = match(r'^(?P<still>currently\s+|still\s+)?in\s+(?P<v>.+)$', rest)
    place = _proper(m.group('v')) if m else None
    if place and looks_like_organisation(place):
        return [Claim('employer', place)]
    if place and m and (m.group('still') or '').strip().lower() == 'still':
        return [Claim('location', place)]  # "we're still in Olympia": where they live, not where they are this week
    return [Claim('current_location', place)] if place else []


def _on_leave(rest: str) -> list[Claim]:
    m = match(
        r'^(?P<v>on\s+(?:a\s+)?(?:(?:parental|sick|maternity|paternity|annual|medical|study|unpaid)\s+)?'
        r'(?:vacation|holiday|holidays|leave|pto|sabbatical|break|a break))\b',
        rest,
    )
    return [Claim('status', m.group('v').lower())] if m else []


def _status(rest: str) -> list[Claim]:
    m = match(rf'^(?:currently\s+|now\s+|still\s+)?(?P<v>{_STATUSES})\s*$', rest)
    return [Claim('status', m.group('v').lower())] if m else []


def _acting_as(rest: str) -> list[Claim]:
    """ "(I'm) running the data team as head of data": the role an activity is done in."""
    m = match(r'^(?:running|leading|managing|heading|working|serving|acting|doing\s+\w+)\b[^,;]{0,60}?\s+as\s+(?P<rest>.+)$', rest)
    parsed = split_title(m.group('rest')) if m else None
    return [Claim('occupation', parsed[0])] if parsed else []


def _title(rest: str) -> list[Claim]:
    parsed = split_title(rest)
    if not parsed:
        return []
    title, tail = parsed
    return [Claim('occupation', title), *_title_tail(tail)]


def _title_tail(tail: str) -> list[Claim]:
    """What follows a title: "at Acme" → employer, "based in Lyon" → location, "originally from Braga" → hometown, one
    part after another when commas or dashes separate them ("-- based in Porto, originally from Braga")."""
    found: list[Claim] = []
    for part in _TAIL_BREAK.split(tail.strip(' ,;—–-'))[:_MAX_TAIL_PARTS]:
        claim = _tail_part(part)
        if claim is None:
            break
        found.append(claim)
    return found


def _tail_part(part: str) -> Claim | None:
    if m := match(rf'^(?:over\s+)?(?P<prep>at|for|with|of|in|by)\s+(?:the\s+)?(?:{_UNNAMED_ORG})?(?P<v>.+)$', part):
        org = _proper(m.group('v'))
        if org and (m.group('prep').lower() in ('at', 'for', 'with', 'of') or looks_like_organisation(org)):
            return Claim('employer', org)
        return None
    if m := match(r'^(?:(?:currently|now)\s+)?(?:based|living|located)\s+in\s+(?P<v>.+)$', part):
        place = _proper(m.group('v'))
        return Claim('location', place) if place else None
    if m := match(rf'^(?:originally\s+)?from\s+(?:{_UNNAMED_PLACE})?(?P<v>.+)$', part):
        place = _proper(m.group('v'))
        return Claim('hometown', place) if place else None
    return None


def _name(rest: str) -> list[Claim]:
    m = re.match(rf'^(?P<v>{PROPER})\s*(?:$|,|[—–]|-{{1,2}}\s|\s(?:and|but|here|by the way)\b|\s(?i:from)\s+(?P<org>{PROPER}))', rest)
    if not m or not m.group('v')[0].isalpha() or any(w.lower() in NOT_NAMES for w in m.group('v').split()) or len(m.group('v').split()) > 3:
        return []
    org = m.group('org')
    if org:
        return [Claim('name', m.group('v')), *([Claim('employer', org)] if looks_like_organisation(org) else [])]
    # "I'm Sam, a data engineer at Acme", "I'm Ana -- a product designer -- based in Porto", "I am Anneke Dijkstra, 34 years"
    after = rest[m.end('v') :]
    appositive = match(r'^\s*(?:,|\s[—–-]{1,2}|[—–])\s*(?P<rest>(?:a|an|the)\s+.+)$', after)
    aged = match(r'^\s*,\s*(?P<rest>\d{1,3}(?:\s*(?:years?|yrs?)(?:\s+old)?)?\s*(?:$|,.*|\s+and\b.*))$', after)
    return [
        Claim('name', m.group('v')),
        *(_title(appositive.group('rest')) if appositive else []),
        *(_age(aged.group('rest')) if aged else []),
    ]


def looks_like_organisation(name: str) -> bool:
    """ "Zentrix Labs", "Acme Inc": a company-like last word (a bare "Porto" in "Sam from Porto" is more likely a place)."""
    return name.split()[-1].lower().rstrip('.') in ORG_SUFFIXES


# ------------------------------------------------------------------------------------------------ verbs


def _my_name(text: str) -> list[Claim]:
    m = re.match(rf"^(?i:my\s+name(?:\s+is|'s))\s+(?P<v>{PROPER})", text)
    return [Claim('name', m.group('v'))] if m else []


def _preferred_name(text: str) -> list[Claim]:
    if re.search(r"\b(?:don't|do\s+not|never|stop|dont)\b(?:\s+\w+){0,2}\s+call(?:ing)?\s+me\b", text, re.IGNORECASE):
        return []  # "dont ever call me kaiden": a name not to use
    m = re.search(
        r"(?<!don't )(?<!never )(?<!not )\b(?i:calls? me|i go by|refer to me as|address me as|being called|to be called|"
        r'(?:be\s+)?addressed\s+(?:simply\s+|just\s+)?as)'
        rf'\s+(?P<v>{PROPER})',
        text,
    )
    return [Claim('preferred_name', m.group('v'))] if m and m.group('v').lower() not in NOT_NAMES else []


def _employment(text: str) -> list[Claim]:
    m = match(_WORK_AT, text)
    if m and (m.group('prep').lower() in ('at', 'for') or looks_like_organisation(m.group('org'))):  # "in Leeds" is a place
        return [Claim('employer', m.group('org')), *_as_title(m.group('tail'))]
    if m := match(_BEEN_AT, text):
        return [Claim('employer', m.group('org'))]
    if m := match(rf'^i{_WORK}\s+(?:as|like)\s+(?P<rest>.+)$', text):  # "I work like data analyst": non-native "as"
        parsed = split_title(m.group('rest'))
        return [Claim('occupation', parsed[0]), *_title_tail(parsed[1])] if parsed else []
    if m := match(rf'^(?:my\s+)?new\s+job\s+is\s+(?:at|with)\s+(?P<org>{PROPER})', text):
        return [Claim('employer', m.group('org'), change=True)]
    if m := _GOT_JOB.match(text):
        post = _POSTS.get(m.group('post').lower())
        parsed = (post, '') if post else split_title(m.group('role').strip()) if m.group('role').strip() else None
        return [Claim('employer', m.group('org'), change=True), *([Claim('occupation', parsed[0], change=True)] if parsed else [])]
    joined = (
        rf'^i\s+{_ADVERBS}(?:joined|started\s+(?:at|with|working\s+(?:at|for))|got\s+hired\s+(?:at|by))\s+(?P<org>{PROPER})(?P<tail>.*)$'
    )
    if m := match(joined, text):
        return [Claim('employer', m.group('org'), change=True), *(Claim(c.key, c.value, True) for c in _as_title(m.group('tail')))]
    if m := match(rf"^i\s+{_ADVERBS}(?:got|was|have\s+been|'ve\s+been|am\s+being|'m\s+being)\s+promoted\s+to\s+(?P<rest>.+)$", text):
        parsed = split_title(m.group('rest'))
        return [Claim('occupation', parsed[0], change=True)] if parsed else []
    return []


# "I got a new job at Acme", "my husband Tom got the curator job at the Ashcombe Museum", "he took up a readership at the
# Orrin Institute": the employer, and the role when it is said
_GOT_JOB = re.compile(
    r'^(?:i\s+)?(?:just\s+)?(?:got|found|landed|took(?:\s+up)?|started|accepted|was\s+offered)\s+(?:a|an|the|my)?\s*(?:new\s+)?'
    r'(?P<role>(?:[\w-]+\s+){0,2}?)(?P<post>job|post|position|role|readership|professorship|lectureship|fellowship|chair)\s+'
    rf'(?:at|with)\s+(?:the\s+)?(?P<org>{PROPER})',
    re.IGNORECASE,
)
_POSTS = {'readership': 'reader', 'professorship': 'professor', 'lectureship': 'lecturer', 'fellowship': 'fellow'}


def _as_title(tail: str) -> list[Claim]:
    m = match(r'^\s*,?\s*as\s+(?P<rest>.+)$', tail)
    parsed = split_title(m.group('rest')) if m else None
    return [Claim('occupation', parsed[0])] if parsed else []


def _home(text: str) -> list[Claim]:
    """ "Home's Connel, 10 min up the road", "my home is in Hexham": where someone lives."""
    m = match(rf"^(?:my\s+|our\s+)?home(?:'s|\s+is)\s+(?:in\s+)?(?P<v>{PROPER})", text) or match(
        rf"^(?:we're|we\s+are)\s+still\s+(?:living\s+)?in\s+(?P<v>{PROPER})", text
    )
    return [Claim('location', m.group('v'))] if m and not _is_tier(m.group('v')) else []


def _residence(text: str) -> list[Claim]:
    lives = rf'^(?:i|we)(?:\s+(?:(?:currently|still|now|both)\s+)?live|{_HAVE_LIVED})\s+in\s+'
    if m := match(rf'{lives}(?P<v>{PROPER})', text):
        return [Claim('location', m.group('v'))]
    if m := match(
        rf'{lives}(?:a|an|the|our|my)\s+(?:[\w-]+\s+){{0,3}}?(?:apt|apartment|flat|house|place|condo|cottage|bungalow)\s+in\s+(?P<v>{PROPER})',
        text,
    ):
        return [Claim('location', m.group('v'))]
    if m := match(rf'^(?:i|we)\s+{_ADVERBS}(?:moved|relocated)\s+(?:back\s+)?to\s+(?P<v>{PROPER})', text):
        if looks_like_organisation(m.group('v')):  # "Moved to Carrickvale General in September. Same ICU job."
            return [Claim('employer', m.group('v'), change=True)]
        return [] if _is_tier(m.group('v')) else [Claim('location', m.group('v'), change=True)]
    return []


def _language(text: str) -> list[Claim]:
    """ "I speak German and English", "I don't speak French, only German and a little Dutch": one value per language."""
    m = match(r'^i\s+(?:also\s+)?speak\s+(?P<v>.+)$', text) or match(
        r"^i\s+(?:don't|do\s+not|dont)\s+speak\s+[\w\s,]+?,\s*(?:only|just|but)\s+(?P<v>.+)$", text
    )
    if not m:
        return []
    tokens = re.findall(r'[\w-]+', clean_value(re.sub(r'\s+from\s+.*$', '', m.group('v'))))
    languages = [t.capitalize() for t in tokens if t.lower() in LANGUAGES]
    fillers = {'and', 'a', 'little', 'bit', 'of', 'some', 'basic', 'fluent', 'native', 'well', 'both', 'also', 'only', 'fluently'}
    ok = languages and all(t.lower() in LANGUAGES or t.lower() in fillers for t in tokens)
    return [Claim('language', language) for language in dict.fromkeys(languages)] if ok else []


def _lived_before(text: str) -> list[Claim]:
    """ "Before we lived in Zilverdijk", "before I was six years in Hallbrück", "I came directly from Porto Serrano for
    work": where someone lived before."""
    m = match(
        rf'^before\b.{{0,40}}?\b(?:i|we)\s+(?:lived|was|were|used\s+to\s+live|was\s+living|was\s+working)\b.{{0,30}}?\bin\s+(?P<v>{PROPER})',
        text,
    ) or match(rf'^(?:i|we)\s+(?:came|come)\s+(?:here\s+|over\s+)?(?:directly\s+|straight\s+)?from\s+(?P<v>{PROPER})', text)
    return [Claim('moved_from', m.group('v'))] if m else []


_EMAIL = re.compile(r'[\w.+-]+@[\w-]+(?:\.[\w-]+)+')


def _email(text: str) -> list[Claim]:
    """ "My e-mail, if you need it, is m@example.com", "new is m.b@example.com" (after "my e-mail"): an address given."""
    if not match(
        r'^my\s+(?:(?:work|personal|private|new|main|old)\s+)?e-?mail\b|^(?:my\s+)?new\s+(?:one\s+|e-?mail\s+|address\s+)?is\b', text
    ):
        return []
    m = _EMAIL.search(text)
    return [Claim('email', m.group(0).rstrip('.'))] if m else []


def _sport(text: str) -> list[Claim]:
    """ "I swim most mornings", "I make bouldering", "I do yoga": a sport someone does (``plays``, like the games)."""
    if m := match(
        rf'^(?:i|we)\s+(?:also\s+|still\s+|usually\s+|often\s+)?(?P<v>{"|".join(SPORTS)})\b(?!\s+(?:to|into|out|away|off|a|the|my)\b)',
        text,
    ):
        return [Claim('plays', SPORTS[m.group('v').lower()])]
    m = match(r'^(?:i|we)\s+(?:also\s+|still\s+)?(?:make|do|go|practi[sc]e)\s+(?P<v>[a-z]+)\b', text)
    return [Claim('plays', m.group('v').lower())] if m and m.group('v').lower() in SPORT_GERUNDS else []


def _is_tier(word: str) -> bool:
    return word.lower() in TIER_WORDS


def _plan_change(text: str) -> list[Claim]:
    m = match(
        rf'^(?:i|we)\s+{_ADVERBS}(?P<verb>upgraded|downgraded|switched|moved|changed|migrated|went)\s+'
        r'(?:(?:my|our)\s+(?:plan|subscription|account)\s+)?'
        r'(?:from\s+(?:the\s+)?(?P<old>[\w-]+)(?:\s+(?:plan|tier|subscription))?\s+)?'
        r'to\s+(?:the\s+|a\s+|an\s+)?(?P<new>[\w-]+)(?P<word>\s+(?:plan|tier|subscription|package|edition))?\b',
        text,
    )
    if not m:
        return []
    planish = m.group('word') or m.group('verb').lower() in ('upgraded', 'downgraded') or _is_tier(m.group('new'))
    return [Claim('plan', m.group('new'), change=True)] if planish or (m.group('old') and _is_tier(m.group('old'))) else []


def _plan_held(text: str) -> list[Claim]:
    m = match(
        r"^(?:(?:i|we)(?:'ve|\s+have)?(?:\s+got)?|(?:i|we)(?:'ve|\s+have)\s+been\s+on|"
        r'(?:i|we)\s+(?:pay\s+for|bought|purchased|subscribed\s+to|signed\s+up\s+for)|'
        r"we're\s+on|we\s+are\s+on)\s+(?:the|a|an)\s+(?P<v>[\w-]+)\s+(?:plan|tier|subscription|package|edition)\b",
        text,
    )
    return [Claim('plan', m.group('v'))] if m else []


def _generic(text: str) -> list[Claim]:
    m = match(rf"^(?:my|our)\s+(?P<k>[a-z][\w' -]*?)(?:\s+{_KEY_VERB}|(?P<joined>'s))\s+(?P<v>.+)$", text)
    if not m:
        return []
    raw_key = _KEY_MODIFIERS.sub('', m.group('k').lower())
    key_words = raw_key.split()
    if raw_key in _KEY_PREFIXES or len(key_words) > 3 or set(key_words) & {'to', 'for', 'with', 'in', 'on', 'at', 'from', 'about', 'and'}:
        return []
    key = _KEY_ALIASES.get(slug(raw_key), slug(raw_key))
    value = clean_value(m.group('v'))
    if not key or not value or key in _GENERIC_KEY_STOPLIST or _VALUE_REJECT.match(value) or len(value.split()) > 8:
        return []
    if _EMAIL.fullmatch(value) and 'mail' not in key:  # "My current address is h.p@example.co.uk"
        return [Claim('email', value)]
    if raw_key in PERSON_RELATIONS or raw_key.split()[-1] in PERSON_RELATIONS or without_honorific(value)[0]:
        return []  # "my husband is Dutch", "my co-applicant is Prof. Tobias …": a person, not a value of the speaker
    if key == 'occupation':
        return [Claim('occupation', value)]
    notable = bool(re.search(r'[\d@$€£]', value)) or value[0].isupper()
    known_shape = key in _KEY_ALIASES.values() or key in IDENTITY_KEYS or key.startswith(_KEY_PREFIXES)
    if m.group('joined') and not known_shape:
        return []  # "my timezone's CET" is a key-value statement; "my mom's Italian" is not about a key of the speaker
    return [Claim(key, value)] if notable or known_shape else []


_AFTER_I_AM: tuple[Callable[[str], list[Claim]], ...] = (
    _allergy,
    _plan_membership,
    _based_in,
    _origin,
    _working,
    _at_place,
    _in_city,
    _on_leave,
    _status,
    enthusiasm,
    _pursuit,
    _diet,
    _acting_as,
    _nationality,
)
_READERS: tuple[Callable[[str], list[Claim]], ...] = (
    _my_name,
    _diet_kept,
    _home,
    _years_had,
    _allergies,
    _lived_before,
    _email,
    _sport,
    _i_am,
    _employment,
    _teaching,
    _plan_change,
    _plan_held,
    _residence,
    _language,
    preference,
    drinks,
    long_held,
    plays,
    unnamed_favourite,
    _been_doing,
    _aim,
    _generic,
)
