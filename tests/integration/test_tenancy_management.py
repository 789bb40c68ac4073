"""Management API and key lifecycle (CONTRACT §3, §10, §12, §13): contexts, principals, keys, self-service keys."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.composition import Services
from agent_memory.domain import auth
from agent_memory.domain.auth import hash_key
from tests.support.handlers import MGMT, Api, mgmt

TRIPLE = {'entity': {'type': 'person', 'name': 'Alice'}, 'key': 'city', 'value': 'Paris'}


def me(context_id: str, key: str) -> tuple[int, Any]:
    code, payload, _ = Api(context_id, key).call('views', 'GET', '/me')
    return code, payload


def key_rows(services: Services, context_id: str) -> list[dict[str, Any]]:
    return list(services.db.query('control', 'SELECT * FROM api_key WHERE context = $c;', {'c': context_id})[0] or [])


@pytest.fixture
def ctx(services: Services) -> Iterator[str]:
    """A context created through the management API, dropped afterwards."""
    cid = f'm{uuid.uuid4().hex[:12]}'
    assert mgmt('POST', f'/{cid}', {})[0] == 201
    yield cid
    services.control.delete_context(cid)
    services.drop_context(cid)


def new_principal(ctx: str, **body: Any) -> dict[str, Any]:
    code, created = mgmt('POST', f'/{ctx}/principals', {'kind': 'agent', **body})
    assert code == 201, created
    return created  # type: ignore[no-any-return]


def mint(ctx: str, principal: str, name: str, body: Any = None, **kwargs: Any) -> dict[str, Any]:
    code, minted = mgmt('POST', f'/{ctx}/principals/{principal}/keys/{name}', body, **kwargs)
    assert code == 201, minted
    return minted  # type: ignore[no-any-return]


# ---------------------------------------------------------------- contexts


def test_context_create_list_get_with_effective_config(services: Services) -> None:
    # Given a new context id and a partial config, When it is created, listed and read, Then each shows the effective
    # config, and duplicates, bad ids and unknown ids are 409/422/404
    cid = f'm{uuid.uuid4().hex[:12]}'
    try:
        # Given a new context with a partial config override
        code, created = mgmt('POST', f'/{cid}', {'config': {'lifecycle': {'context_ttl_days': 3}}})
        # Then it is created with the effective config (override + defaults)
        assert code == 201
        assert created['config']['lifecycle']['context_ttl_days'] == 3
        assert created['config']['response_cache']['similarity_threshold'] == 0.92
        # And it is listed as a bare array of {id, createdAt}
        code, listed = mgmt('GET', '')
        assert code == 200 and isinstance(listed, list)
        mine = [c for c in listed if c['id'] == cid]
        assert mine == [{'id': cid, 'createdAt': created['createdAt']}]
        # And GET shows the same effective config
        code, got = mgmt('GET', f'/{cid}')
        assert code == 200 and got == created
        # And a duplicate is 409, a bad id 422, an unknown id 404
        assert mgmt('POST', f'/{cid}', {})[0] == 409
        assert mgmt('POST', '/bad!id', {})[0] == 422
        assert mgmt('POST', '/contexts', {})[0] == 422
        assert mgmt('POST', '/' + 'x' * 65, {})[0] == 422
        assert mgmt('GET', '/nope-does-not-exist')[0] == 404
        assert mgmt('PATCH', '/nope-does-not-exist', {'config': {}})[0] == 404
        assert mgmt('DELETE', '/nope-does-not-exist')[0] == 404
        assert mgmt('GET', '/bad!id')[0] == 422
    finally:
        services.control.delete_context(cid)


def test_context_description_and_admin_identity_are_accepted_stored_and_returned(services: Services) -> None:
    cid = f'm{uuid.uuid4().hex[:12]}'
    body = {'description': 'Support bot memory', 'admin_external_id': 'idp|42', 'admin_display_name': 'Ops Team'}
    try:
        # Given a context created with the reference's optional fields
        code, created = mgmt('POST', f'/{cid}', body)
        # Then it is created and the description comes back, on create, on GET and after a PATCH
        assert code == 201, created
        assert created['description'] == 'Support bot memory'
        assert mgmt('GET', f'/{cid}')[1]['description'] == 'Support bot memory'
        assert mgmt('PATCH', f'/{cid}', {'config': {}})[1]['description'] == 'Support bot memory'
        # And the admin principal carries the given display name and external id
        code, admin = mgmt('GET', f'/{cid}/principals/admin')
        assert code == 200 and (admin['displayName'], admin['externalId']) == ('Ops Team', 'idp|42')
    finally:
        services.control.delete_context(cid)
        services.drop_context(cid)


def test_a_context_without_the_optional_fields_has_no_description_and_the_default_admin(ctx: str) -> None:
    # Given a context created without the optional fields, When it and its admin are read, Then no description and the default admin
    assert mgmt('GET', f'/{ctx}')[1]['description'] is None
    code, admin = mgmt('GET', f'/{ctx}/principals/admin')
    assert code == 200 and (admin['displayName'], admin['externalId']) == ('Admin', None)


@pytest.mark.parametrize(
    'body',
    [{'namespace': 'x'}, {'description': 'x' * 1025}, {'admin_display_name': 'System'}, {'adminDisplayName': ' '},
     {'admin_external_id': ''}, {'description': 'a', 'admin_display_name': 'a', 'adminDisplayName': 'b'}],
    ids=['unknown-field', 'description-too-long', 'system-name', 'blank-name', 'empty-external-id', 'two-spellings'],
)  # fmt: skip
def test_a_bad_context_body_is_400_and_creates_nothing(services: Services, body: dict[str, Any]) -> None:
    # Given a context body with an unknown or invalid field, When posted, Then 400 and no context exists
    cid = f'm{uuid.uuid4().hex[:12]}'
    code, problem = mgmt('POST', f'/{cid}', body)
    assert code == 400, problem
    assert mgmt('GET', f'/{cid}')[0] == 404
    assert services.control.get_context(cid) is None


def test_management_routes_need_the_management_key(ctx: str, api: Api) -> None:
    # Given a data-plane admin key of some context, and no key at all
    for headers in ({'authorization': f'Bearer {api.key}'}, {'authorization': ''}):
        # When either is used on management routes
        for method, path in (('GET', '/api/v1/contexts'), ('GET', f'/api/v1/contexts/{ctx}'), ('DELETE', f'/api/v1/contexts/{ctx}'),
                             ('GET', f'/api/v1/contexts/{ctx}/principals')):  # fmt: skip
            code, _, _ = api.call('contexts', method, path, headers=headers)
            # Then it is 401 and nothing changes
            assert code == 401, (method, path)
    assert mgmt('GET', f'/{ctx}')[0] == 200


def test_patch_deep_merges_into_the_stored_override(ctx: str, services: Services) -> None:
    # Given a context whose override sets two sections
    assert (
        mgmt('PATCH', f'/{ctx}', {'config': {'response_cache': {'similarity_threshold': 0.8}, 'lifecycle': {'context_ttl_days': 3}}})[0]
        == 200
    )
    # When a PATCH touches one field of one section
    code, patched = mgmt('PATCH', f'/{ctx}', {'config': {'response_cache': {'freshness_window_seconds': 60}}})
    # Then that field changes and every other section and sibling field is kept
    assert code == 200
    assert patched['config']['response_cache'] == {'enabled': True, 'similarity_threshold': 0.8, 'freshness_window_seconds': 60}
    assert patched['config']['lifecycle']['context_ttl_days'] == 3
    assert patched['config']['reconciliation']['confidence_floor'] == 0.7
    assert mgmt('GET', f'/{ctx}')[1] == patched
    # And only the override (not the defaults) is stored
    stored = services.control.get_context(ctx)
    assert stored is not None
    assert stored.config == {
        'response_cache': {'similarity_threshold': 0.8, 'freshness_window_seconds': 60},
        'lifecycle': {'context_ttl_days': 3},
    }


def test_patch_null_retention_means_keep_forever(ctx: str) -> None:
    # Given a context, When a PATCH sets one trace retention to null, Then that one keeps forever and the others keep
    # their defaults
    code, patched = mgmt('PATCH', f'/{ctx}', {'config': {'trace_retention': {'retrieval_trace_days': None}}})
    assert code == 200
    assert patched['config']['trace_retention']['retrieval_trace_days'] is None
    assert patched['config']['trace_retention']['response_trace_days'] == 90


@pytest.mark.parametrize(
    'patch',
    [
        {'response_cache': {'similarity_threshold': 0}},
        {'response_cache': {'similarity_threshold': 1.5}},
        {'response_cache': {'freshness_window_seconds': -1}},
        {'response_cache': {'enabled': 'yes'}},
        {'trace_retention': {'retrieval_trace_days': 0}},
        {'reconciliation': {'confidence_floor': 2}},
        {'lifecycle': {'context_ttl_days': 0}},
        {'response_cache': {'bogus': 1}},
        {'bogus_section': {}},
        {'models': 'gpt'},
    ],
    ids=lambda p: str(p),
)
def test_invalid_patch_is_400_and_changes_nothing(ctx: str, patch: dict[str, Any]) -> None:
    # Given a context with an override
    assert mgmt('PATCH', f'/{ctx}', {'config': {'lifecycle': {'context_ttl_days': 5}}})[0] == 200
    before = mgmt('GET', f'/{ctx}')[1]
    # When an invalid PATCH arrives
    code, body = mgmt('PATCH', f'/{ctx}', {'config': patch})
    # Then it is 400 and the config is unchanged
    assert code == 400, body
    assert mgmt('GET', f'/{ctx}')[1] == before


def test_patch_body_must_be_a_config_object(ctx: str) -> None:
    # Given a context, When a PATCH carries a non-object config, another field or broken JSON, Then each is a 400
    assert mgmt('PATCH', f'/{ctx}', {'config': [1]})[0] == 400
    assert mgmt('PATCH', f'/{ctx}', {'settings': {}})[0] == 400
    assert MGMT.call('contexts', 'PATCH', f'/api/v1/contexts/{ctx}', '{not json')[0] == 400


def test_delete_context_revokes_its_keys_and_forgets_it(services: Services) -> None:
    # Given a context with an admin key and a principal's key, both working
    cid = f'm{uuid.uuid4().hex[:12]}'
    assert mgmt('POST', f'/{cid}', {})[0] == 201
    try:
        admin_key = mint(cid, 'admin', 'ops')['secret']
        new_principal(cid, id='bot', displayName='Bot', grants={'memory:read': ['*']})
        bot_key = mint(cid, 'bot', 'k')['secret']
        assert me(cid, admin_key)[0] == 200 and me(cid, bot_key)[0] == 200
        # When the context is deleted
        code, body = mgmt('DELETE', f'/{cid}')
        # Then 204 with no body, every key is 401, GET is 404 and a second DELETE is 404
        assert (code, body) == (204, None)
        assert me(cid, admin_key)[0] == 401 and me(cid, bot_key)[0] == 401
        assert mgmt('GET', f'/{cid}')[0] == 404
        assert mgmt('DELETE', f'/{cid}')[0] == 404
        assert key_rows(services, cid) == []
        assert cid not in [c['id'] for c in mgmt('GET', '')[1]]
        # And re-creating the same id does not bring the old keys back
        assert mgmt('POST', f'/{cid}', {})[0] == 201
        assert me(cid, admin_key)[0] == 401
        assert mgmt('GET', f'/{cid}/principals/bot')[0] == 404
    finally:
        services.control.delete_context(cid)


# ---------------------------------------------------------------- principals


def test_principal_create_get_list_patch_delete(ctx: str, services: Services) -> None:
    # Given a new agent principal with grants
    code, created = mgmt(
        'POST',
        f'/{ctx}/principals',
        {'id': 'alpha-bot', 'displayName': 'Alpha bot', 'kind': 'agent',
         'grants': {'memory:read': ['org/acme/*'], 'memory:write': ['org/acme/bots/alpha/*']}},
    )  # fmt: skip
    # Then it is 201 with normalised grants (every verb listed) and a default write scope inside its write grant
    assert code == 201
    assert created['id'] == 'alpha-bot' and created['displayName'] == 'Alpha bot' and created['kind'] == 'agent'
    assert created['grants'] == {
        'memory:read': ['org/acme/*'],
        'memory:write': ['org/acme/bots/alpha/*'],
        'memory:forget': [],
        'grant:manage': [],
    }
    assert created['defaultScopes'] == [['org/acme/bots/alpha']]
    assert created['externalId'] is None and created['createdAt']
    # And GET returns it, and the list (a bare array) holds it beside the reserved principals
    assert mgmt('GET', f'/{ctx}/principals/alpha-bot') == (200, created)
    code, listed = mgmt('GET', f'/{ctx}/principals')
    assert code == 200 and isinstance(listed, list)
    assert {p['id'] for p in listed} == {'system', 'admin', 'alpha-bot'}
    # When it is patched
    code, patched = mgmt('PATCH', f'/{ctx}/principals/alpha-bot',
                         {'displayName': 'Alpha', 'kind': 'service', 'grants': {'memory:read': ['*'], 'memory:write': ['org/acme/*']},
                          'defaultScopes': [['org/acme/shared']]})  # fmt: skip
    # Then the changes are visible on GET and the id and creation time are kept
    assert code == 200
    assert (patched['displayName'], patched['kind'], patched['defaultScopes']) == ('Alpha', 'service', [['org/acme/shared']])
    assert patched['grants']['memory:read'] == ['*'] and patched['grants']['memory:write'] == ['org/acme/*']
    assert patched['createdAt'] == created['createdAt']
    assert mgmt('GET', f'/{ctx}/principals/alpha-bot') == (200, patched)
    # And a key of it authenticates as it
    key = mint(ctx, 'alpha-bot', 'laptop')['secret']
    assert me(ctx, key)[1]['principalId'] == 'alpha-bot'
    # When it is deleted
    assert mgmt('DELETE', f'/{ctx}/principals/alpha-bot') == (204, None)
    # Then it is gone, its keys are gone (rows and auth), and deleting again is 404
    assert mgmt('GET', f'/{ctx}/principals/alpha-bot')[0] == 404
    assert me(ctx, key)[0] == 401
    assert [r for r in key_rows(services, ctx) if r['principal'] == 'alpha-bot'] == []
    assert mgmt('DELETE', f'/{ctx}/principals/alpha-bot')[0] == 404
    # And re-creating the same id does not revive the old key
    new_principal(ctx, id='alpha-bot', displayName='Alpha again', grants={'memory:read': ['*']})
    assert me(ctx, key)[0] == 401


def test_principal_without_grants_sees_nothing(ctx: str) -> None:
    # Given admin wrote a fact at the root, and a principal created without grants
    # Given a fact at the root and a principal created without grants, When its key reads and writes, Then it
    # authenticates but sees nothing and cannot write
    admin_key = mint(ctx, 'admin', 'ops')['secret']
    assert Api(ctx, admin_key).call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [TRIPLE]})[0] in (200, 201)
    created = new_principal(ctx, displayName='Nobody')
    # Then it holds no grants, a server-minted id and the root as its default scope
    assert created['grants'] == {'memory:read': [], 'memory:write': [], 'memory:forget': [], 'grant:manage': []}
    assert created['id'] and created['id'] not in ('system', 'admin')
    assert created['defaultScopes'] == [['/']]
    # And its key authenticates but reads nothing and cannot write (fail closed)
    key = mint(ctx, created['id'], 'k')['secret']
    code, who = me(ctx, key)
    assert code == 200 and who['principalId'] == created['id']
    assert all(patterns == [] for patterns in who['effectiveGrants'].values())
    code, entities, _ = Api(ctx, key).call('entities', 'GET', '/entities')
    assert code == 200 and entities['entities'] == []
    assert Api(ctx, key).call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': [TRIPLE]})[0] == 403


@pytest.mark.parametrize(
    ('grants', 'expected'),
    [
        ({'memory:write': ['*']}, [['/']]),
        ({'memory:write': ['org/a']}, [['org/a']]),
        ({'memory:write': ['org/a/*', 'org/b/*']}, [['org/a']]),
    ],
)
def test_default_scopes_follow_the_first_write_pattern(ctx: str, grants: dict[str, list[str]], expected: list[list[str]]) -> None:
    # Given write grants, When a principal is created without default scopes, Then its default is the first write
    # pattern's node
    assert new_principal(ctx, displayName='P', grants=grants)['defaultScopes'] == expected


def test_external_id_is_create_or_get(ctx: str) -> None:
    # Given a principal created with an external id
    body = {'displayName': 'Alice', 'kind': 'human', 'externalId': 'idp:usr_123', 'grants': {'memory:read': ['*']}}
    code, first = mgmt('POST', f'/{ctx}/principals', body)
    assert code == 201 and first['externalId'] == 'idp:usr_123'
    # When the same external id is posted again (even with other fields)
    code, again = mgmt('POST', f'/{ctx}/principals', {**body, 'displayName': 'Alice B', 'grants': {}})
    # Then the existing principal comes back unchanged with 200, and there is still one of it
    assert code == 200 and again == first
    listed = mgmt('GET', f'/{ctx}/principals')[1]
    assert [p['id'] for p in listed if p['externalId'] == 'idp:usr_123'] == [first['id']]
    # And a different external id is a different principal
    code, other = mgmt('POST', f'/{ctx}/principals', {**body, 'displayName': 'Bob', 'externalId': 'idp:usr_456'})
    assert code == 201 and other['id'] != first['id']


def test_principal_conflicts_and_bad_input(ctx: str) -> None:
    # Given an existing principal, When duplicates, reserved ids and malformed bodies are posted, Then each gets its 409
    # or 400 and nothing is created
    new_principal(ctx, id='bot', displayName='Bot')
    before = mgmt('GET', f'/{ctx}/principals')[1]
    cases: list[tuple[dict[str, Any], int]] = [
        ({'id': 'bot', 'displayName': 'Other'}, 409),  # duplicate id
        ({'id': 'admin', 'displayName': 'Other'}, 409),  # reserved id
        ({'displayName': 'Bot'}, 409),  # display name unique per context
        ({'displayName': 'Admin'}, 409),
        ({'displayName': 'X', 'grants': {'read': ['*']}}, 400),  # flat verb
        ({'displayName': 'X', 'grants': {'memory:admin': ['*']}}, 400),
        ({'displayName': 'X', 'grants': {'memory:read': ['a/*/b']}}, 400),
        ({'displayName': 'X', 'grants': {'memory:read': 'org/a'}}, 400),
        ({'displayName': 'X', 'grants': {'memory:write': ['org/a/*']}, 'defaultScopes': [['org/b']]}, 400),
        ({'displayName': 'X', 'kind': 'robot'}, 400),
        ({'displayName': ''}, 400),
        ({'displayName': '   '}, 400),
        ({'displayName': 'X', 'id': 'has space'}, 400),
        ({'displayName': 'X', 'colour': 'red'}, 400),
        ({}, 400),
    ]
    for body, expected in cases:
        code, problem = mgmt('POST', f'/{ctx}/principals', {'kind': 'agent', **body})
        assert code == expected, (body, problem)
    # And nothing was created by the refused requests
    assert mgmt('GET', f'/{ctx}/principals')[1] == before
    assert mgmt('POST', '/no-such-context/principals', {'displayName': 'X', 'kind': 'agent'})[0] == 404
    assert mgmt('GET', f'/{ctx}/principals/ghost')[0] == 404
    assert mgmt('PATCH', f'/{ctx}/principals/ghost', {'displayName': 'G'})[0] == 404


def test_principal_patch_rules(ctx: str) -> None:
    # Given two principals, When PATCHes break a rule, Then each is refused and changes nothing; moving grant and
    # default together works and an empty PATCH is a no-op
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:write': ['org/a/*']})
    new_principal(ctx, id='other', displayName='Other')
    before = mgmt('GET', f'/{ctx}/principals/bot')[1]
    # A taken display name, an unknown verb, a null field, an out-of-region default and a write grant that
    # no longer covers the current default scope are all refused, and change nothing
    for body, expected in (
        ({'displayName': 'Other'}, 409),
        ({'grants': {'memory:delete': ['*']}}, 400),
        ({'displayName': None}, 400),
        ({'defaultScopes': [['org/b']]}, 400),
        ({'grants': {'memory:write': ['org/b/*']}}, 400),
        ({'externalId': 'x'}, 400),
    ):
        code, problem = mgmt('PATCH', f'/{ctx}/principals/bot', body)
        assert code == expected, (body, problem)
    assert mgmt('GET', f'/{ctx}/principals/bot')[1] == before
    # Moving the write grant together with the default scope is fine; an empty PATCH changes nothing
    code, moved = mgmt('PATCH', f'/{ctx}/principals/bot', {'grants': {'memory:write': ['org/b/*']}, 'defaultScopes': 'org/b/x'})
    assert code == 200 and moved['defaultScopes'] == [['org/b/x']]
    assert mgmt('PATCH', f'/{ctx}/principals/bot', {}) == (200, moved)


def test_reserved_principals(ctx: str) -> None:
    # The system principal is immutable, cannot be deleted and cannot hold keys
    # Given the reserved principals, When system is patched, deleted or keyed and admin deleted or renamed, Then only
    # the rename succeeds and admin's keys keep working
    system = mgmt('GET', f'/{ctx}/principals/system')[1]
    assert mgmt('PATCH', f'/{ctx}/principals/system', {'displayName': 'Sys'})[0] == 403
    assert mgmt('DELETE', f'/{ctx}/principals/system')[0] == 403
    assert mgmt('POST', f'/{ctx}/principals/system/keys/k')[0] == 403
    assert mgmt('GET', f'/{ctx}/principals/system')[1] == system
    # admin cannot be deleted but may be renamed, and its keys keep working
    key = mint(ctx, 'admin', 'ops')['secret']
    assert mgmt('DELETE', f'/{ctx}/principals/admin')[0] == 403
    code, renamed = mgmt('PATCH', f'/{ctx}/principals/admin', {'displayName': 'Administrator'})
    assert code == 200 and renamed['displayName'] == 'Administrator'
    assert me(ctx, key)[1]['displayName'] == 'Administrator'


# ---------------------------------------------------------------- keys (management)


def test_key_mint_list_rotate_delete(ctx: str, services: Services) -> None:
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['*'], 'memory:write': ['*']})
    # Given a minted key: the secret is shown once and works
    minted = mint(ctx, 'bot', 'laptop')
    assert set(minted) == {'name', 'principalId', 'secret', 'grants', 'expiresAt', 'createdAt'}
    assert (minted['name'], minted['principalId'], minted['grants'], minted['expiresAt']) == ('laptop', 'bot', None, None)
    assert me(ctx, minted['secret'])[0] == 200
    # And the list (a bare array) shows it without secret or hash
    code, listed = mgmt('GET', f'/{ctx}/principals/bot/keys')
    assert code == 200 and [k['name'] for k in listed] == ['laptop']
    assert all('secret' not in k and 'hash' not in k and minted['secret'] not in str(k) for k in listed)
    # And the same name again is 409; a key for an unknown principal or context is 404
    assert mgmt('POST', f'/{ctx}/principals/bot/keys/laptop')[0] == 409
    assert mgmt('POST', f'/{ctx}/principals/ghost/keys/laptop')[0] == 404
    assert mgmt('POST', '/no-such-context/principals/bot/keys/laptop')[0] == 404
    assert mgmt('POST', f'/{ctx}/principals/bot/keys/bad name')[0] == 400
    # When it is rotated
    code, rotated = mgmt('POST', f'/{ctx}/principals/bot/keys/laptop/rotate')
    # Then the new secret works, the old one is dead at once, and there is one record for the name
    assert code == 200 and rotated['secret'] != minted['secret'] and rotated['name'] == 'laptop'
    assert me(ctx, rotated['secret'])[0] == 200
    assert me(ctx, minted['secret'])[0] == 401
    assert [r['name'] for r in key_rows(services, ctx) if r['principal'] == 'bot'] == ['laptop']
    # When it is deleted
    assert mgmt('DELETE', f'/{ctx}/principals/bot/keys/laptop') == (204, None)
    # Then it no longer authenticates, and rotating or deleting it again is 404
    assert me(ctx, rotated['secret'])[0] == 401
    assert mgmt('POST', f'/{ctx}/principals/bot/keys/laptop/rotate')[0] == 404
    assert mgmt('DELETE', f'/{ctx}/principals/bot/keys/laptop')[0] == 404
    assert mgmt('GET', f'/{ctx}/principals/bot/keys') == (200, [])
    assert mgmt('GET', f'/{ctx}/principals/ghost/keys')[0] == 404


def test_keys_are_stored_only_as_hmac(ctx: str, services: Services) -> None:
    # Given minted and rotated keys, When the key rows are read, Then no secret appears, only HMACs of the live ones,
    # each the row's id
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['*']})
    secrets = [mint(ctx, 'bot', 'a')['secret'], mint(ctx, 'admin', 'b')['secret']]
    rotated = mgmt('POST', f'/{ctx}/principals/bot/keys/a/rotate')[1]['secret']
    rows = key_rows(services, ctx)
    dump = str(rows)
    assert all(secret not in dump for secret in [*secrets, rotated])
    hashes = {r['hash'] for r in rows}
    assert hash_key(rotated) in hashes and hash_key(secrets[1]) in hashes and hash_key(secrets[0]) not in hashes
    assert all(str(r['id'].id) == r['hash'] for r in rows)


def test_expired_keys_fail(ctx: str, services: Services, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given a key minted with a one-second TTL: it expires one second after the mint
    # Given keys with a TTL or an expiry, When the clock reaches the expiry, Then they are 401 (and bad expiries are
    # 400)
    not_before = dt.datetime.now(dt.UTC)
    minted = mint(ctx, 'admin', 'short', {'ttlSeconds': 1})
    not_after = dt.datetime.now(dt.UTC)
    expires = dt.datetime.fromisoformat(minted['expiresAt'].replace('Z', '+00:00'))
    assert not_before + dt.timedelta(seconds=1) <= expires <= not_after + dt.timedelta(seconds=1)
    # When the authentication clock reads just before the expiry, Then the key works; at the expiry, Then it is 401
    with monkeypatch.context() as clock:
        clock.setattr(auth, 'utcnow', lambda: expires - dt.timedelta(microseconds=1))
        assert me(ctx, minted['secret'])[0] == 200
        clock.setattr(auth, 'utcnow', lambda: expires)
        assert me(ctx, minted['secret'])[0] == 401
    # And a key whose stored expiry is in the past fails the same way
    other = mint(ctx, 'admin', 'other', {'expiresAt': (dt.datetime.now(dt.UTC) + dt.timedelta(hours=1)).isoformat()})
    assert me(ctx, other['secret'])[0] == 200
    past = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=5)
    services.db.query('control', 'UPDATE api_key SET expires_at = $t WHERE context = $c AND name = "other";', {'t': past, 'c': ctx})
    assert me(ctx, other['secret'])[0] == 401
    # And the TTL can come as a query parameter; bad expiries are 400
    assert mint(ctx, 'admin', 'q', query={'ttlSeconds': '60'})['expiresAt'] is not None
    for body, query in (({'ttlSeconds': 0}, None), ({'ttlSeconds': 'x'}, None), ({'expiresAt': '2001-01-01T00:00:00Z'}, None),
                        ({'ttlSeconds': 5, 'expiresAt': '2999-01-01T00:00:00Z'}, None), (None, {'ttlSeconds': 'soon'}),
                        ({'ttlSeconds': 5}, {'ttlSeconds': '5'})):  # fmt: skip
        assert mgmt('POST', f'/{ctx}/principals/admin/keys/bad', body, query=query)[0] == 400, (body, query)


def test_attenuated_key_grants(ctx: str) -> None:
    # Given a principal and a key narrowed to one team, When /me, widening mints and a rotation happen, Then the
    # narrowing shows, widening is refused and rotation keeps it
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['org/acme/*'], 'memory:write': ['org/acme/*']})
    # Given a key narrowed to reading one team
    minted = mint(ctx, 'bot', 'team', {'grants': {'memory:read': ['org/acme/team/*']}})
    assert minted['grants'] == {'memory:read': ['org/acme/team/*']}
    # Then /me shows the token grants and the narrowed effective grants
    code, who = me(ctx, minted['secret'])
    assert code == 200
    assert who['tokenGrants'] == {'memory:read': ['org/acme/team/*']}
    assert who['effectiveGrants']['memory:read'] == ['org/acme/team/*']
    assert who['effectiveGrants']['memory:write'] == []
    # And widening or unknown verbs are refused with 400, minting nothing
    for grants in ({'memory:read': ['*']}, {'memory:read': ['org/beta/*']}, {'grant:manage': ['org/acme/*']}, {'read': ['*']}):
        assert mgmt('POST', f'/{ctx}/principals/bot/keys/wide', {'grants': grants})[0] == 400, grants
    assert [k['name'] for k in mgmt('GET', f'/{ctx}/principals/bot/keys')[1]] == ['team']
    # And rotation keeps the attenuation
    rotated = mgmt('POST', f'/{ctx}/principals/bot/keys/team/rotate')[1]
    assert me(ctx, rotated['secret'])[1]['tokenGrants'] == {'memory:read': ['org/acme/team/*']}


def test_a_key_of_one_context_is_401_on_another(ctx: str, services: Services) -> None:
    # Given two contexts each with a key, When each key is used on the other context, Then it is 401
    other = f'm{uuid.uuid4().hex[:12]}'
    assert mgmt('POST', f'/{other}', {})[0] == 201
    try:
        key_a = mint(ctx, 'admin', 'k')['secret']
        key_b = mint(other, 'admin', 'k')['secret']
        assert me(ctx, key_a)[0] == 200 and me(other, key_b)[0] == 200
        assert me(other, key_a)[0] == 401 and me(ctx, key_b)[0] == 401
        assert Api(other, key_a).call('keys', 'GET', '/keys')[0] == 401
    finally:
        services.control.delete_context(other)


# ---------------------------------------------------------------- self-service keys (data plane)


def test_self_service_key_lifecycle(ctx: str) -> None:
    # Given a principal with a key, When it lists, mints, rotates and deletes its own keys, Then each works within its
    # grants and refused requests get 409/400
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['*'], 'memory:write': ['org/a/*']})
    main = mint(ctx, 'bot', 'main')['secret']
    mint(ctx, 'admin', 'ops')
    api = Api(ctx, main)
    # GET /keys lists the caller's own principal's keys only, marking the calling one
    code, listed, _ = api.call('keys', 'GET', '/keys')
    assert code == 200 and [(k['name'], k['current']) for k in listed['keys']] == [('main', True)]
    assert all('secret' not in k and 'hash' not in k for k in listed['keys'])
    # POST /keys?ttlSeconds= mints a key for the same principal, shown once, with an expiry
    code, minted, _ = api.call('keys', 'POST', '/keys', {'name': 'ci', 'grants': {'memory:read': ['org/a/*']}}, query={'ttlSeconds': '600'})
    assert code == 201 and minted['principalId'] == 'bot' and minted['expiresAt'] is not None and minted['secret']
    code, who = me(ctx, minted['secret'])
    assert code == 200 and who['principalId'] == 'bot' and who['effectiveGrants']['memory:read'] == ['org/a/*']
    assert who['effectiveGrants']['memory:write'] == []
    # A duplicate name is 409, a widening grant 400, a bad name 400
    assert api.call('keys', 'POST', '/keys', {'name': 'ci'})[0] == 409
    assert api.call('keys', 'POST', '/keys', {'name': 'wide', 'grants': {'grant:manage': ['*']}})[0] == 400
    assert api.call('keys', 'POST', '/keys', {'name': 'bad name'})[0] == 400
    # Without a name one is generated
    code, unnamed, _ = api.call('keys', 'POST', '/keys', {})
    assert code == 201 and unnamed['name']
    # Rotation: the new secret works, the old is dead
    code, rotated, _ = api.call('keys', 'POST', '/keys/ci/rotate')
    assert code == 200 and me(ctx, rotated['secret'])[0] == 200 and me(ctx, minted['secret'])[0] == 401
    # Another principal's key name is 404 (not ours), and so is an unknown one
    assert api.call('keys', 'DELETE', '/keys/ops')[0] == 404
    assert api.call('keys', 'POST', '/keys/ops/rotate')[0] == 404
    assert api.call('keys', 'DELETE', '/keys/nope')[0] == 404
    # Delete: 204, then the key is dead
    assert api.call('keys', 'DELETE', '/keys/ci')[:2] == (204, None)
    assert me(ctx, rotated['secret'])[0] == 401
    assert sorted(k['name'] for k in api.call('keys', 'GET', '/keys')[1]['keys']) == sorted(['main', unnamed['name']])


def test_self_service_never_exceeds_the_calling_key(ctx: str) -> None:
    # Given an attenuated, expiring key, When it mints, rotates or deletes keys, Then nothing it makes outlives or
    # outranks it and stronger keys are out of its reach
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['*'], 'memory:write': ['*']})
    full = mint(ctx, 'bot', 'full')['secret']
    narrow = mint(ctx, 'bot', 'narrow', {'grants': {'memory:read': ['org/a/*']}, 'ttlSeconds': 600})
    api = Api(ctx, narrow['secret'])
    # A key minted without grants by an attenuated, expiring key inherits both limits
    code, child, _ = api.call('keys', 'POST', '/keys', {'name': 'child'})
    assert code == 201 and child['expiresAt'] == narrow['expiresAt']
    assert me(ctx, child['secret'])[1]['effectiveGrants']['memory:read'] == ['org/a/*']
    assert me(ctx, child['secret'])[1]['effectiveGrants']['memory:write'] == []
    # A longer TTL is clamped to the calling key's expiry
    code, longer, _ = api.call('keys', 'POST', '/keys', {'name': 'longer'}, query={'ttlSeconds': '86400'})
    assert code == 201 and longer['expiresAt'] == narrow['expiresAt']
    # Grants beyond the calling key's effective grants are 400, even if the principal holds them
    assert api.call('keys', 'POST', '/keys', {'name': 'w', 'grants': {'memory:write': ['*']}})[0] == 400
    # A key with more authority than the caller can be neither rotated nor deleted by it
    assert api.call('keys', 'POST', '/keys/full/rotate')[0] == 403
    assert api.call('keys', 'DELETE', '/keys/full')[0] == 403
    assert me(ctx, full)[0] == 200
    # But it may manage keys no stronger than itself, and itself
    assert api.call('keys', 'DELETE', '/keys/child')[0] == 204
    code, self_rotated, _ = api.call('keys', 'POST', '/keys/narrow/rotate', query={'ttlSeconds': '86400'})
    assert code == 200 and self_rotated['expiresAt'] == narrow['expiresAt']  # rotation cannot extend its own life
    assert me(ctx, narrow['secret'])[0] == 401 and me(ctx, self_rotated['secret'])[0] == 200


def test_self_service_refuses_delegated_callers(ctx: str) -> None:
    # Given an admin key acting on behalf of another principal, When it mints a key, Then it is 403 and no key exists
    new_principal(ctx, id='bot', displayName='Bot', grants={'memory:read': ['*']})
    admin = Api(ctx, mint(ctx, 'admin', 'ops')['secret'])
    assert me(ctx, admin.key)[0] == 200
    code, _, _ = admin.call('keys', 'POST', '/keys', {'name': 'x'}, headers={'X-Memory-On-Behalf-Of': 'bot'})
    assert code == 403
    assert mgmt('GET', f'/{ctx}/principals/bot/keys')[1] == []


def test_self_service_with_an_unknown_or_missing_key_is_401(ctx: str) -> None:
    # Given an unknown or missing key, When /keys is read or posted, Then it is 401
    for key in ('am_not-a-real-key', ''):
        headers = {'authorization': f'Bearer {key}' if key else ''}
        assert Api(ctx, 'x').call('keys', 'GET', '/keys', headers=headers)[0] == 401
        assert Api(ctx, 'x').call('keys', 'POST', '/keys', {'name': 'n'}, headers=headers)[0] == 401
