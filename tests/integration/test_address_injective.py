"""Attribute addresses are injective (issue 12, hole 9): (entity type, name, key) never share an address.

The address is the indexed string `type/name#key` the reconciler, tier-1 lookups, history and purge go through;
'%' and '#' in the name are escaped (migration 0013), and rows stored before the migration are recomputed.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from agent_memory.composition import Services
from agent_memory.db.migrations import load_migrations
from local_runtime.events import LocalContext, http_event
from tests.support.handlers import Api, load_function

COLLIDING = [
    ({'type': 'language', 'name': 'e'}, '48ee30#creator', 'Ada'),
    ({'type': 'language', 'name': 'E#48ee30'}, 'creator', 'Grace'),
    ({'type': 'language', 'name': 'e%2348ee30'}, 'creator', 'Linus'),  # an escaped-looking name is escaped too
]


def write(api: Api, entity: dict[str, str], key: str, value: str) -> tuple[int, Any]:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': entity, 'key': key, 'value': value}]})
    return code, body


def get(api: Api, function: str, route: str, params: dict[str, str]) -> tuple[int, Any]:
    """A GET whose path parameters arrive decoded, as API Gateway delivers them ('#' cannot sit raw in a path)."""
    path = '/'.join(quote(params.get(part[1:-1], part), safe='') if part.startswith('{') else part for part in route.split('/'))
    event = http_event('GET', f'/api/v1/{api.context_id}{path}', path_parameters={'context_id': api.context_id, **params},
                       headers={'authorization': f'Bearer {api.key}'})  # fmt: skip
    result = load_function(function).lambda_handler(event, LocalContext())
    return result['statusCode'], json.loads(result['body'])


def current(api: Api, entity: dict[str, str]) -> list[tuple[str, str]]:
    code, body = get(api, 'entities', '/entities/{entity_type}/{name}', {'entity_type': entity['type'], 'name': entity['name']})
    assert code == 200, body
    return [(a['key'], a['value']) for a in body['attributes']]


def test_names_and_keys_holding_the_separator_never_collide(api: Api) -> None:
    # When three writers use the (entity, key) pairs whose old addresses coincide
    # Given (entity, key) pairs whose old string addresses coincide
    for entity, key, value in COLLIDING:
        code, body = write(api, entity, key, value)
        assert code == 200, body
    # Then each entity holds exactly its own fact, and a second value supersedes only its own address
    for entity, key, value in COLLIDING:
        assert current(api, entity) == [(key, value)]
    entity, key, _ = COLLIDING[1]
    assert write(api, entity, key, 'Hopper')[0] == 200
    assert [current(api, e) for e, _, _ in COLLIDING] == [[COLLIDING[0][1:]], [(key, 'Hopper')], [COLLIDING[2][1:]]]
    params = {'entity_type': 'language', 'name': 'E#48ee30', 'key': key}
    code, history = get(api, 'entities', '/entities/{entity_type}/{name}/history/{key}', params)
    assert code == 200 and [h['value'] for h in history['history']] == ['Hopper', 'Grace'], history


def test_rows_stored_with_the_old_address_format_stay_addressable(services: Services, api: Api) -> None:
    # Given a fact stored before migration 0013 (its address in the old, unescaped format)
    entity, key, _ = COLLIDING[1]
    assert write(api, entity, key, 'Grace')[0] == 200
    db = services.store(api.context_id).database
    old_format = 'string::concat(record::id(entity)[0], "/", record::id(entity)[1], "#", key)'
    services.db.query(db, f'DEFINE FIELD OVERWRITE address ON attribute VALUE {old_format}; UPDATE attribute SET key = key RETURN NONE;')
    assert services.db.query(db, 'SELECT VALUE address FROM attribute;')[0] == ['other/e#48ee30#creator']  # 'language' folds to 'other'
    # When the migration runs
    migration = next(m for m in load_migrations('context') if m.name == 'injective_addresses')
    services.db.query(db, migration.sql)
    # Then the stored row has the new address and is found and superseded through it
    assert services.db.query(db, 'SELECT VALUE address FROM attribute;')[0] == ['other/e%2348ee30#creator']
    assert write(api, entity, key, 'Hopper')[0] == 200
    assert current(api, entity) == [(key, 'Hopper')]


def test_a_conflict_that_outlasts_the_retries_is_a_503_with_retry_after(services: Services, api: Api, monkeypatch: Any) -> None:
    # Given a write whose transaction keeps meeting a concurrent change (forced here: every apply conflicts)
    from agent_memory.db.memory_store import MemoryStore
    from agent_memory.errors import WriteConflict

    def always_conflicting(self: MemoryStore, plan: Any) -> None:
        raise WriteConflict('am-write-conflict: attribute changed')

    db = services.store(api.context_id).database
    before = services.db.query(db, 'SELECT * FROM attribute; SELECT * FROM entity; SELECT * FROM session;')
    monkeypatch.setattr(MemoryStore, 'apply', always_conflicting)
    # When it is sent, Then it is a retryable 503 (never a 500) and nothing was written
    code, body, headers = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [
        {'entity': {'type': 'person', 'name': 'Ada'}, 'key': 'city', 'value': 'Paris'}]})  # fmt: skip
    assert code == 503 and headers['Retry-After'] == '1', body
    assert services.db.query(db, 'SELECT * FROM attribute; SELECT * FROM entity; SELECT * FROM session;') == before
