"""Principal ids that differ only in case never share a self entity (issue 12, hole 5 variant; CONTRACT §6.2).

Self entities are ``person/"self:<principal id>"`` with the name case-folded like every entity name, so principals
``Bob`` and ``bob`` would share one: each would read the other's first-person facts as its own in /profile and
write into them. Principal ids are therefore unique regardless of case: creating ``bob`` when ``Bob`` exists is a 409.
"""

from __future__ import annotations

from tests.support.handlers import Api, mgmt


def test_a_principal_id_differing_only_in_case_is_a_409_and_creates_nothing(api: Api) -> None:
    # Given principal Bob, When bob is created, Then it is 409 and no bob exists
    grants = {'memory:read': ['shared/*'], 'memory:write': ['shared/*']}
    code, body = mgmt('POST', f'/{api.context_id}/principals', {'id': 'Bob', 'displayName': 'Bob', 'kind': 'human', 'grants': grants})
    assert code == 201, body
    code, body = mgmt('POST', f'/{api.context_id}/principals', {'id': 'bob', 'displayName': 'Bobby', 'kind': 'human', 'grants': grants})
    assert code == 409, body
    assert mgmt('GET', f'/{api.context_id}/principals/bob')[0] == 404


def test_a_reserved_principal_id_in_another_case_is_a_409(api: Api) -> None:
    # Given the reserved admin, When Admin is created, Then it is 409 and no Admin exists
    grants = {'memory:read': ['shared/*'], 'memory:write': ['shared/*']}
    code, body = mgmt('POST', f'/{api.context_id}/principals', {'id': 'Admin', 'displayName': 'Mimic', 'kind': 'human', 'grants': grants})
    assert code == 409, body
    assert mgmt('GET', f'/{api.context_id}/principals/Admin')[0] == 404
