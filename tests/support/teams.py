"""Two teams sharing one context: each reads, writes and forgets only inside its own region."""

from __future__ import annotations

from typing import Any

from agent_memory.composition import Services
from agent_memory.db.memory_store import MemoryStore
from tests.support.handlers import Api
from tests.support.principals import make_principal

TEAM_A, TEAM_B = 'team/a', 'team/b'
ALICE = {'type': 'person', 'name': 'Alice'}


def team(services: Services, context_id: str, pid: str, region: str) -> Api:
    verbs = {'memory:read': [f'{region}/*'], 'memory:write': [f'{region}/*'], 'memory:forget': [f'{region}/*']}
    return make_principal(services, context_id, pid, verbs, region)


def remember(api: Api, entity: dict[str, str], key: str, value: str) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [{'entity': entity, 'key': key, 'value': value}]})
    assert code == 200, body


def a_rows(store: MemoryStore) -> list[Any]:
    """Team A's attribute rows (id, value, validity): what B's deletes must never change."""
    return store.rows("SELECT id, value, valid_until FROM attribute WHERE scope_sets CONTAINS ['team/a'] ORDER BY id;")
