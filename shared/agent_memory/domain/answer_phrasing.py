"""What the extractive /chat composer needs to answer a question without an LLM (CONTRACT §7.1).

* A user passage that only asks something ("what is my current plan?") is stored as a turn, but it is
  not a memory of a fact: it is never evidence for an answer.
* A source matches a question by its address: an attribute whose key words (or a relation whose label
  words) the question names outranks one that merely shares a word, and the text overlap breaks ties.
* For a first-person question, the caller's own facts come before anyone else's.
* The caller's own facts are phrased in the second person ("Your plan is Pro."), not under the display
  name of the key's principal.
"""

from __future__ import annotations

from agent_memory.domain.retrieval import Hit, content_words, is_first_person
from agent_memory.domain.statements import is_question

_THIRD_PERSON = {'is': 'are', 'was': 'were', 'has': 'have', 'does': 'do'}


def is_asked_question(hit: Hit) -> bool:
    """A passage of the user's own earlier question: a turn, never evidence."""
    return hit.table == 'memory_chunk' and hit.role == 'user' and is_question(hit.text)


def _stems(text: str) -> set[str]:
    return {w[:-1] if len(w) > 3 and w.endswith('s') and not w.endswith('ss') else w for w in content_words(text).split()}


def relevance(question: str, hit: Hit, caller_refs: frozenset[str]) -> tuple[bool, float, int]:
    """(a first-person question and a fact about the caller, share of the fact's key or label words the question
    names, content words shared with the question): "what is my name?" is answered by the caller's name first."""
    asked = _stems(question)
    named = hit.resource.get('key') or hit.resource.get('label') or ''
    address = _stems(named.replace('_', ' ')) if named else set()
    mine = is_first_person(question) and bool(caller_refs & set(hit.entity_refs))
    return mine, (len(asked & address) / len(address) if address else 0.0), len(asked & _stems(hit.text))


def _verb_for_you(verb: str) -> str:
    if verb in _THIRD_PERSON:
        return _THIRD_PERSON[verb]
    if verb.endswith(('ches', 'shes', 'sses', 'xes', 'oes')):
        return verb[:-2]
    if verb.endswith('ies') and len(verb) > 4:
        return verb[:-3] + 'y'
    return verb[:-1] if verb.endswith('s') and not verb.endswith('ss') else verb


def phrase(hit: Hit, caller_refs: frozenset[str]) -> str:
    """One sentence for a source, without the final full stop; the caller's own facts in the second person."""
    resource = hit.resource
    if hit.table == 'attribute' and hit.entity_refs and hit.entity_refs[0] in caller_refs:
        value = hit.text.split(': ', 1)[1] if ': ' in hit.text else hit.text
        return f'Your {resource["key"].replace("_", " ")} is {value}'
    if hit.table == 'relates_to' and set(hit.entity_refs) & caller_refs:
        subject, obj = hit.entity_refs
        verb, *rest = resource['label'].split('_')
        subject_text = 'You' if subject in caller_refs else resource.get('subjectName') or subject
        verb_text = _verb_for_you(verb) if subject in caller_refs else verb
        object_text = 'you' if obj in caller_refs else resource.get('objectName') or obj
        return ' '.join([subject_text, verb_text, *rest, object_text])
    return hit.text.rstrip('.')
