"""The SurrealQL VISIBLE predicate the repositories filter with agrees with the Python rule (CONTRACT §3)."""

from __future__ import annotations

from agent_memory.db.memory_store import VISIBLE, MemoryStore, visibility_params
from agent_memory.domain.scopes import normalise_scope_sets, visible
from tests.support.handlers import Api

_ROW_SCOPES: list[list[list[str]]] = [
    [['/']],
    [['org/a']],
    [['org/a/b']],
    [['org/a/b/c']],
    [['org/ab']],
    [['org/b']],
    [['org/a', 'team/x']],
    [['org/b'], ['team/x']],
    [['team/x/y']],
    [['team/xy'], ['org/ab', 'org/b']],
]

_READERS: list[list[str]] = [
    ['*'],
    [],
    ['/'],
    ['org/a'],
    ['org/a/*'],
    ['org/*'],
    ['org/a', 'team/x'],
    ['org/a/*', 'team/x/*'],
    ['team/x'],
    ['team/x/*'],
    ['org/b', 'team/x/y'],
    ['org/ab', 'org/b', 'team/xy'],
    ['org/a/b/*'],
]


def test_surrealql_visible_predicate_agrees_with_python_visible(api: Api, store: MemoryStore) -> None:
    # Given attribute rows written (by the admin, who may write anywhere) under many scope sets
    for i, scope_sets in enumerate(_ROW_SCOPES):
        status, body, _ = api.call('facts', 'POST', '/facts', {
            'infer': 'triples', 'scopes': scope_sets,
            'triples': [{'entity': {'type': 'topic', 'name': 'visibility'}, 'key': f'k{i}', 'value': f'v{i}'}],
        })  # fmt: skip
        assert status == 200, body
    rows = store.q('SELECT id, scope_sets FROM attribute;')[0]
    assert len(rows) == len(_ROW_SCOPES)
    assert sorted(r['scope_sets'] for r in rows) == sorted(normalise_scope_sets(s) for s in _ROW_SCOPES)
    for patterns in _READERS:
        # When the database filters with VISIBLE for a reader
        in_db = {str(i) for i in store.q(f'SELECT VALUE id FROM attribute WHERE {VISIBLE};', **visibility_params(patterns))[0]}
        # Then it returns exactly the rows the Python rule calls visible
        in_python = {str(r['id']) for r in rows if visible(r['scope_sets'], patterns)}
        assert in_db == in_python, patterns
    # And the comparison is not vacuous: some readers see some but not all rows
    partial = [p for p in _READERS if 0 < sum(visible(r['scope_sets'], p) for r in rows) < len(rows)]
    assert len(partial) >= 8
