"""The extractive (no-LLM) answer to a /chat question: a current fact or passage that answers what was asked, or
nothing (CONTRACT §7.1, "Answers say what memory holds, or that it holds nothing").

A fact answers when it is about the entity asked about and holds the thing asked for (``domain/asked.py``): "What is
the name of my dog?" is answered by the asker's pet relation to a dog, "Where does my sister live?" by the location of
the person the asker's sister relation reaches, "What plan is Bob on?" by Bob's plan, never by Alice's or by the
asker's own name. A question with no such address ("What did Caroline paint last week?") is answered by a passage
said by (or naming) the person asked about that shares most of the question's words. Anything else: nothing answers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.domain.asked import PET_KEYS, Asked, asked, relation_labels, species_of
from agent_memory.domain.retrieval import Hit, content_words
from agent_memory.domain.statements import is_question, statements
from agent_memory.extraction.stage0.lexicon import word_set

MAX_ANSWERS = 3
# Question words carry no evidence of their own ("What did Caroline realize …": "realize" is asked, not said).
_ASKING = word_set(
    'what when where which who whom whose why how did does do is are was were has have had tell remind say said mention '
    'mentioned think thought know realize realise like kind type sort name called anything something ever'
)
_SENTENCE = re.compile(r'[^.!?]+[.!?]*')
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|we|we're|our|us|mine)\b", re.IGNORECASE)
_MIN_OVERLAP = 0.75  # a question about no one in particular: a passage must state most of what it asks
_MIN_SHARE_NAMED = 0.34  # about a named person, among their own statements: a third of the asked words (LoCoMo 0-2)
MAX_NOTES = 3
_PAST = re.compile(r'\b(?:before|previous(?:ly)?|formerly|former|used\s+to|old\s+job|last\s+job|earlier\s+job)\b', re.IGNORECASE)
# Not a career: "before retirement" asks the last one.
_CHANGING_KEYS = frozenset({'employer', 'company', 'workplace', 'location', 'city', 'lives_in', 'residence', 'plan', 'diet'})
_KINDS_OF_LIKING = frozenset({'likes', 'dislikes', 'plays', 'preference', 'diet'})
# What a question about a liking may ask without naming a kind of thing the answer must be
_GENERIC_THINGS = word_set(
    'drink drinks drinking food eat eats eating music sport sports hobby hobbie hobbies activity activitie thing things kind type sort '
    'favorite favourite now currently usually these day days anymore like love enjoy enjoys really most much free time weekend '
    'weekends do doing play plays hate hates dislike dislikes stand diet'
)


@dataclass(frozen=True)
class Found:
    number: int  # the source's number in the list the composer was given (1-based)
    hit: Hit
    sentence: str  # what the reply says it shows, without marker or full stop


def answer(question: str, sources: Sequence[Hit], caller_refs: frozenset[str]) -> list[Found]:
    """What answers ``question`` among ``sources`` (best first, at most ``MAX_ANSWERS``); empty when nothing does."""
    a = asked(question)
    numbered = list(enumerate(sources, start=1))
    owners = _owners(a, question, numbered, caller_refs)
    if a.relation or (a.keys and a.keys <= PET_KEYS and a.first_person):
        return _through_relation(a, numbered, owners, caller_refs)[:MAX_ANSWERS]
    found = [
        f
        for f in _facts(a.keys | _named_keys(question, numbered, owners), numbered, owners, caller_refs)
        if _explains(a, f) and _is_the_thing_asked(question, a, f) and not _asks_the_past(question, f)
    ]
    if found:
        return found[:MAX_ANSWERS]
    if a.keys and (a.names or not a.first_person):  # about someone else, a question with an address needs a fact
        return []
    mine = [(n, hit) for n, hit in numbered if not a.keys or _said_by_the_asker(hit, caller_refs)]
    return _passages(question, a, mine, owners)[:MAX_ANSWERS]


def _said_by_the_asker(hit: Hit, caller_refs: frozenset[str]) -> bool:
    """A passage the asker said themself (unnamed, written by their principal): what "my …" can be read from."""
    return hit.speaker is None and bool(hit.principal) and f'person/self:{hit.principal}'.casefold() in caller_refs


def _explains(a: Asked, found: Found) -> bool:
    """A fact answers only if every name the question says is accounted for: the asker's or a named owner, or in the
    fact itself ("Which company did I work for in Shenport?" is not answered by the current employer elsewhere)."""
    said = f'{found.hit.text} {found.hit.resource.get("name") or ""}'.casefold()
    return all(any(w.casefold() in said for w in name.split()) for name in a.places)


def _asks_the_past(question: str, found: Found) -> bool:
    """ "Where did I work before the hotel?", "my previous employer": a current value is not what was asked."""
    return found.hit.resource.get('key') in _CHANGING_KEYS and bool(_PAST.search(question))


def _is_the_thing_asked(question: str, a: Asked, found: Found) -> bool:
    """A liking answers "What is Joanna's favorite movie trilogy?" only if it names what kind of thing was asked for
    ("likes reading" does not; "likes the Lord of the Rings trilogy" does); a generic ask ("what does Keiko like to
    drink?", "what are Gus's hobbies?") takes any of them."""
    if found.hit.resource.get('key') not in _KINDS_OF_LIKING:
        return True
    specific = _asked_words(question, a) - _stems(a.cue) - _GENERIC_THINGS
    return not specific or bool(specific & _stems(found.hit.text))


def _named_keys(question: str, numbered: list[tuple[int, Hit]], owners: frozenset[str]) -> frozenset[str]:
    """The keys of the owners' facts that the question names word for word ("What is Alice's role?" → role,
    "When is the Apollo deadline?" → deadline): a caller's own keys, which no cue list knows."""
    said = _stems(question)
    keys = {
        str(hit.resource.get('key')) for _, hit in numbered if hit.table == 'attribute' and hit.entity_refs and hit.entity_refs[0] in owners
    }
    return frozenset(k for k in keys if k and _stems(k.replace('_', ' ')) <= said)


def _owners(a: Asked, question: str, numbered: list[tuple[int, Hit]], caller_refs: frozenset[str]) -> frozenset[str]:
    """The entities the question is about (before any relation is followed): the asker's for "my …", else those whose
    name the question says ("Bob", "Maya" — the asker's own shown name included)."""
    names = [a.owner] if a.owner else list(a.names)
    people = [n for n in a.names if not re.search(rf'\b(?:in|at|for|from|with|to|before|after|near|since)\s+{re.escape(n)}\b', question)]
    if a.first_person and not a.owner and not (people and a.first_person_is_plural):
        return caller_refs  # "where do I work?"; but "Which company employed Callum before he came to us?" is Callum's
    said = f' {" ".join(content_words(question).split())} '
    refs = {
        ref
        for _, hit in numbered
        for ref, name in _named_refs(hit)
        if any(_same_name(n, name) for n in names) or (not names and name and f' {name.casefold()} ' in said)
    }  # "the office wifi password": an entity named in lowercase counts when the question names no one else
    return frozenset(refs)


def _named_refs(hit: Hit) -> list[tuple[str, str]]:
    resource = hit.resource
    if hit.table == 'attribute' or hit.table == 'entity':
        return [(hit.entity_refs[0], str(resource.get('name') or ''))] if hit.entity_refs else []
    if hit.table == 'relates_to' and len(hit.entity_refs) == 2:
        return [(hit.entity_refs[0], str(resource.get('subjectName') or '')), (hit.entity_refs[1], str(resource.get('objectName') or ''))]
    return []


def _same_name(asked_name: str, stored: str) -> bool:
    """ "Maya" names "Maya Okafor"; "Tamsett" names "J. R. Tamsett"; "Andrea" does not name "Andreas"."""
    a, b = asked_name.casefold().split(), stored.casefold().split()
    return bool(a and b) and (a == b or b[: len(a)] == a or b[-len(a) :] == a)


def _through_relation(a: Asked, numbered: list[tuple[int, Hit]], owners: frozenset[str], caller_refs: frozenset[str]) -> list[Found]:
    """ "my dog's name", "where does my sister live", "my dog's breed": follow the relation from the owner first."""
    word = a.relation or 'pet'
    labels, species = relation_labels(word), species_of(word)
    edges = [
        (n, hit)
        for n, hit in numbered
        if hit.table == 'relates_to' and len(hit.entity_refs) == 2 and hit.entity_refs[0] in owners and hit.resource.get('label') in labels
    ]
    if species:  # "my dog": a pet whose species memory holds as something else is not it
        kinds = {
            hit.entity_refs[0]: _value(hit) for _, hit in numbered if hit.table == 'attribute' and hit.resource.get('key') == 'species'
        }
        edges = [(n, hit) for n, hit in edges if kinds.get(hit.entity_refs[1], species) == species]
    if not edges or (a.one_of_several and len(edges) < 2):  # "the second cat" when memory knows one: not that one
        return []
    if a.wants_name or not a.keys:
        return [Found(n, hit, _relation_sentence(word, hit, caller_refs)) for n, hit in edges]
    reached = frozenset(hit.entity_refs[1] for _, hit in edges)
    return _facts(a.keys, numbered, reached, caller_refs)


def _facts(keys: frozenset[str], numbered: list[tuple[int, Hit]], owners: frozenset[str], caller_refs: frozenset[str]) -> list[Found]:
    wanted = keys | ({'occupation'} if 'title' in keys else set())
    return [
        Found(n, hit, _fact_sentence(hit, caller_refs))
        for n, hit in numbered
        if hit.table == 'attribute' and hit.entity_refs and hit.entity_refs[0] in owners and hit.resource.get('key') in wanted
    ]


def _passages(question: str, a: Asked, numbered: list[tuple[int, Hit]], owners: frozenset[str]) -> list[Found]:
    """An open question: the passages whose statements share enough of what is asked. About a named person: said by
    them (or naming them, in a turn with no speaker), sharing a third of the asked words and at least two, and only when
    no other speaker's statements fit the question better (then the question's premise is the other one's: "What did
    Melanie realise after the charity race?" when Caroline ran it). Otherwise the best passage sharing most words."""
    asked_words = _asked_words(question, a)
    if not asked_words:
        return []
    if not a.names:
        scored = sorted(((_share(asked_words, hit), -n, n, hit) for n, hit in _statements(numbered)), reverse=True)
        return [Found(n, hit, hit.text.rstrip('. ')) for share, _, n, hit in scored[:1] if share >= _MIN_OVERLAP]
    theirs, others = [], 0.0
    for n, hit in _statements(numbered):
        share = _share(asked_words, hit)
        if _said_by(hit, a.names) or (hit.speaker is None and any(name in hit.text for name in a.names)):
            if share >= _MIN_SHARE_NAMED and len(asked_words & _said(hit)) >= min(2, len(asked_words)):
                theirs.append((share, n, hit))
        elif hit.speaker is not None:
            others = max(others, _share(asked_words, hit, about_themself=True))
    if not theirs or others >= max(share for share, _, _ in theirs):
        return []
    return [Found(n, hit, hit.text.rstrip('. ')) for _, n, hit in theirs[:MAX_ANSWERS]]


def notes(question: str, sources: Sequence[Hit], caller_refs: frozenset[str]) -> list[int]:
    """When nothing answers: the numbers of the passages closest to the question, to list as notes (not as an answer):
    said by the person asked about (by the asker for "my …"), sharing an asked word, best ranked first."""
    a = asked(question)
    asked_words = _asked_words(question, a)
    numbered = list(enumerate(sources, start=1))
    close = [
        n
        for n, hit in _statements(numbered)
        if asked_words & _said(hit)
        and (_said_by(hit, a.names) if a.names else (not a.first_person or _said_by_the_asker(hit, caller_refs)))
    ]
    return close[:MAX_NOTES]


def _asked_words(question: str, a: Asked) -> set[str]:
    names = {w.casefold() for n in a.names for w in n.split()}
    return {w for w in _stems(question) if w not in _ASKING and w not in names}


def _statements(numbered: list[tuple[int, Hit]]) -> list[tuple[int, Hit]]:
    return [(n, hit) for n, hit in numbered if hit.table == 'memory_chunk' and not is_question(hit.text)]


def _said(hit: Hit, about_themself: bool = False) -> set[str]:
    """The stems a passage states: its sentences that do not ask ("What made you choose that shade?" states nothing
    about the one who asks it), without a transcript's "Speaker:" label; ``about_themself``: only the sentences in
    the first person ("Wow, a charity race!" is a reaction, "I ran a charity race" is the speaker's own)."""
    text = hit.text.split(': ', 1)[1] if hit.speaker and hit.text.startswith(f'{hit.speaker}: ') else hit.text
    said = statements(text)
    if about_themself:
        said = ' '.join(s for s in _SENTENCE.findall(said) if _FIRST_PERSON.search(s))
    return _stems(said)


def _share(asked_words: set[str], hit: Hit, about_themself: bool = False) -> float:
    return len(asked_words & _said(hit, about_themself)) / len(asked_words)


def _said_by(hit: Hit, names: tuple[str, ...]) -> bool:
    speaker = hit.speaker or ''
    return any(_same_name(n, speaker) for n in names) or any(hit.text.startswith(f'{n}:') for n in names)


def _stems(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith('s') and not w.endswith('ss') else w for w in content_words(text).split()}


def _value(hit: Hit) -> str:
    return hit.text.split(': ', 1)[1] if ': ' in hit.text else hit.text


_VERBS = {'likes': ('like', 'likes'), 'dislikes': ('dislike', 'dislikes'), 'plays': ('do', 'does'), 'language': ('speak', 'speaks')}


def _fact_sentence(hit: Hit, caller_refs: frozenset[str]) -> str:
    key = str(hit.resource.get('key') or '')
    mine = bool(hit.entity_refs) and hit.entity_refs[0] in caller_refs
    if key in _VERBS:  # "You like chess", "Keiko speaks Japanese"
        return f'{"You" if mine else hit.resource.get("name")} {_VERBS[key][0 if mine else 1]} {_value(hit)}'
    words = key.replace('_', ' ')
    return f'Your {words} is {_value(hit)}' if mine else f"{hit.resource.get('name')}'s {words} is {_value(hit)}"


def _relation_sentence(word: str, hit: Hit, caller_refs: frozenset[str]) -> str:
    owner = 'Your' if hit.entity_refs[0] in caller_refs else f"{hit.resource.get('subjectName')}'s"
    return f'{owner} {word} is {hit.resource.get("objectName")}'


def is_dont_know(reply: str) -> bool:
    return reply.startswith(DONT_KNOW)


DONT_KNOW = "I don't know: nothing in memory answers that"
_MARKER = re.compile(r'\s*\[S\d+\]')
