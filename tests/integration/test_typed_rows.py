"""The repository boundary: what the stores hand the domain is typed rows with wire-string ids, read from the real
engine, with no SurrealDB record id anywhere inside them (docs/architecture.md, "Layers")."""

from __future__ import annotations

import dataclasses
from typing import Any

from surrealdb import RecordID

from agent_memory.clock import utcnow
from agent_memory.composition import Services
from agent_memory.db.caller_lookup import resolve_caller
from agent_memory.db.retrieval_store import RetrievalStore
from agent_memory.domain.auth import hash_key
from agent_memory.rows.reads import ReadFilter
from agent_memory.vocabulary import CATEGORIES
from tests.conftest import Api, Worker


def record_ids_in(value: Any, path: str = 'row') -> list[str]:
    """Where, inside ``value`` (dataclasses, lists, dicts), a record id hides."""
    if isinstance(value, RecordID):
        return [path]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [p for f in dataclasses.fields(value) for p in record_ids_in(getattr(value, f.name), f'{path}.{f.name}')]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in record_ids_in(v, f'{path}[{k!r}]')]
    if isinstance(value, (list, tuple)):
        return [p for i, v in enumerate(value) for p in record_ids_in(v, f'{path}[{i}]')]
    return []


def test_every_read_the_domain_makes_returns_typed_rows_without_record_ids(api: Api, worker: Worker, services: Services,
                                                                          context_id: str) -> None:  # fmt: skip
    # Given a session with a said turn (extracted: facts, an instruction, a doubt), triples with a relation, and a chat
    said = api.call('facts', 'POST', '/facts', {'text': "I'm CEO — well, co-CEO, it's complicated. Always answer in French."})[1]
    worker.drain()
    triples = [{'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'employer', 'target': {'type': 'organisation', 'name': 'Acme'}},
               {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'role', 'value': 'CTO'}]  # fmt: skip
    assert api.call('facts', 'POST', '/facts', {'infer': 'triples', 'sessionId': said['sessionId'], 'triples': triples})[0] == 200
    chatted = api.call('chat', 'POST', '/chat', {'message': "What is Alice's role?", 'sessionId': said['sessionId']})[1]
    stores, now = services.context(context_id), utcnow()
    alice = ('person', 'alice')
    # When the domain's reads run against the real engine
    view = stores.reads.entity_view(alice, ['*'], now)
    state = stores.reads.state(CATEGORIES, ['*'], now, 10)
    reads: dict[str, Any] = {
        'entity view': view,
        'state': state,
        'entities': stores.reads.list_entities(['*'], None, 10, None),
        'history': stores.reads.attribute_history(alice, 'role', ['*']),
        'profile': stores.reads.profile(('person', 'self:admin'), CATEGORIES, ['*'], now, 10),
        'uncertainties': stores.reads.list_uncertainties(['*'], None, 10, None),
        'turn': stores.turns.get_turn(said['turnId']),
        'window': stores.turns.recent_turns(f'admin/{said["sessionId"]}', 1 << 62, 10, ['*']),
        'traces': stores.trace_history.recent(None, 10, None),
        'response': stores.trace_history.get('response_trace', chatted['traceId'].split(':', 1)[1]),
        'candidates': RetrievalStore(stores.memory).text_lists(
            dict.fromkeys(('attribute', 'entity', 'memory_chunk'), 5), ['alice'], ReadFilter(['*'], now)
        ),
        'caller': resolve_caller(services.db, hash_key(api.key), context_id, None, None, now, said['sessionId']),
    }
    # Then each is typed and carries wire ids only
    assert {name: record_ids_in(value) for name, value in reads.items() if record_ids_in(value)} == {}
    assert view.entity is not None and view.entity.ref == 'entity:person/alice'
    assert {(r.subject, r.object) for r in view.relations} == {('entity:person/alice', 'entity:organisation/acme')}
    assert all(a.ref.startswith('attribute:') and a.entity == 'entity:person/alice' for a in view.attributes)
    assert state.instructions and state.instructions[0].ref.startswith('instruction:')
    turn = reads['turn']
    assert turn is not None and turn.id == said['turnId'] and turn.session_key == f'admin/{said["sessionId"]}'
    caller = reads['caller']
    assert caller.sessions and caller.sessions[0].session_id == said['sessionId'] and caller.principal.id == 'admin'
