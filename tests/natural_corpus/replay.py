"""A natural-corpus conversation through the API, and what memory then holds in the shape ``scoring.score`` reads.

Shared by ``bench/natural.py`` and ``tests/integration/test_natural_conversation.py``: ``call(function, method, path,
body, query)`` calls one handler of the conversation's context and returns the decoded body (asserting a 2xx), ``drain``
runs the extraction worker until the queue is empty, ``instructions`` lists the active instructions' rows
(``description``, ``turn``: the id of the turn that stated it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.natural_corpus.scoring import Conversation, Stored

Call = Callable[[str, str, str, Any, dict[str, str] | None], Any]


def ingest(call: Call, drain: Callable[[], None], conversation: Conversation) -> dict[str, int]:
    """Send the conversation one day at a time, the way its speaker would (two people talking send each message with
    its speaker's ``name``); returns turn id -> index in the file."""
    by_turn: dict[str, int] = {}
    days: dict[str, list[int]] = {}
    for i, turn in enumerate(conversation.turns):
        days.setdefault(turn['ts'][:10], []).append(i)
    for indices in days.values():
        messages = [
            {'role': 'user', 'content': conversation.turns[i]['text'], 'ts': conversation.turns[i]['ts']}
            | ({'name': conversation.turns[i]['speaker']} if conversation.named else {})
            for i in indices
        ]
        body = call('facts', 'POST', '/facts/batch', {'messages': messages, 'extract': 'per_message'}, None)
        by_turn.update(zip(body['turnIds'], indices, strict=True))
        drain()
    return by_turn


def stored_state(
    call: Call, instructions: Callable[[], list[dict[str, Any]]], conversation: Conversation, turns: dict[str, int]
) -> tuple[Stored, list[str]]:
    """What memory holds (``GET /state``, ``GET /uncertainty``, the active instructions), and the names the speaker's
    self entity is shown by."""
    state = call('views', 'GET', '/state', None, {'limit': '500'})
    doubts = call('views', 'GET', '/uncertainty', None, {'limit': '200', 'resolved': 'false'})
    names: dict[str, str] = {}
    self_ids: set[str] = set()
    entities: list[dict[str, Any]] = []
    for category in ('identity', 'knowledge', 'context'):
        for entity in state[category]['entities']:
            names[entity['id']] = entity['name']
            entities.append(entity)
            if '/self:' in entity['id']:
                self_ids.add(entity['id'])

    def named(entity_id: str) -> str:
        if entity_id in self_ids and not conversation.named:
            return conversation.speakers[0]
        return names.get(entity_id) or entity_id.split('/', 1)[-1]

    def turn_of(source: dict[str, Any] | None) -> int | None:
        ref = (source or {}).get('ref') or ''
        return turns.get(ref.removeprefix('turn:'))

    facts: list[tuple[str, str, str, int | None]] = []
    relations: list[tuple[str, str, str]] = []
    first_turn: dict[str, int | None] = {}
    for category in ('identity', 'knowledge', 'context'):
        for a in state[category]['attributes']:
            turn = turn_of(a.get('source'))
            facts.append((named(a['entity']), a['key'], a['value'], turn))
            first_turn.setdefault(a['entity'], turn)
        for r in state[category]['relations']:
            relations.append((named(r['subject']), r['label'], named(r['object'])))
            first_turn.setdefault(r['object'], turn_of(r.get('source')))
    stated = [(r['description'], turns.get(str(r['turn']))) for r in instructions()]
    unknowns = [(u['about'], turns.get(str(u.get('sourceTurn') or ''))) for u in doubts['uncertainties']]
    events = sum(len(state[c]['actions']) for c in ('identity', 'knowledge', 'context'))
    listed = [(e['entityType'], e['name'], first_turn.get(e['id'])) for e in entities if e['id'] not in self_ids]
    return Stored(facts, relations, listed, stated, unknowns, events), sorted({names[i] for i in self_ids})


ACTIVE_INSTRUCTIONS = 'SELECT description, record::id(source_turn) AS turn FROM instruction WHERE active = true;'
