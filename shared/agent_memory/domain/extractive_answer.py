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
from agent_memory.domain.statements import is_question
from agent_memory.extraction.stage0.lexicon import word_set

MAX_ANSWERS = 3
# Question words carry no evidence of their own ("What did Caroline realize …": "realize" is asked, not said).
_ASKING = word_set(
    'what when where which who whom whose why how did does do is are was were has have had tell remind say said mention '
    'mentioned think thought know realize realise like kind type sort name called anything something ever'
)
_MIN_OVERLAP = 0.75


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
    found = [f for f in _facts(a.keys | _named_keys(question, numbered, owners), numbered, owners, caller_refs) if _explains(a, f)]
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
    if a.first_person and not a.owner:
        return caller_refs
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
    """An open question: a passage that shares most of what is asked, said by (or naming) whom it is asked about."""
    names = {w.casefold() for n in a.names for w in n.split()}
    asked_words = {w for w in _stems(question) if w not in _ASKING and w not in names}
    if not asked_words:
        return []
    scored = []
    for n, hit in numbered:
        if hit.table != 'memory_chunk' or is_question(hit.text):
            continue
        if a.names and not (_said_by(hit, a.names) or any(name in hit.text for name in a.names)):
            continue  # "What did Caroline …": Melanie's turn about it is not Caroline's
        share = len(asked_words & _stems(hit.text)) / len(asked_words)
        if share >= _MIN_OVERLAP and (len(asked_words) < 3 or len(asked_words & _stems(hit.text)) >= 2):
            scored.append((share, -n, n, hit))
    scored.sort(reverse=True)
    return [Found(n, hit, hit.text.rstrip('. ')) for _, _, n, hit in scored[:1]]


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
