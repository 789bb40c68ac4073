"""A request for a context that does not exist, or with a key that is not valid for it, creates no database: before,
the caller lookup switched into ``ctx_<hex>`` whatever the key, so anonymous requests could create databases without
limit, and a request to a deleted context brought an empty one back."""

from __future__ import annotations

import uuid

from agent_memory.composition import Services
from agent_memory.db.connection import CONTROL_DB, context_db_name
from tests.support.handlers import Api


def _databases(services: Services) -> set[str]:
    info = services.control.db.query(CONTROL_DB, 'INFO FOR NS;')[0]
    return set(info['databases'])


def test_bogus_keys_and_unknown_contexts_create_no_database(services: Services, api: Api) -> None:
    ghost = f'ghost{uuid.uuid4().hex[:8]}'
    before = _databases(services)
    assert context_db_name(ghost) not in before
    # When an anonymous caller with a made-up key, and a real key of another context, address a context that does not
    # exist
    stranger = Api(ghost, 'am_made-up-key-that-was-never-minted')
    assert stranger.call('views', 'GET', '/me')[0] == 401
    code, _, _ = Api(ghost, api.key).call('views', 'GET', '/me')
    assert code in (401, 403)
    # and a made-up key addresses a context that exists
    assert Api(api.context_id, 'am_made-up-key-that-was-never-minted').call('views', 'GET', '/me')[0] == 401
    # Then no database was created
    assert _databases(services) == before
    # and the real key still works in its own context
    assert api.call('views', 'GET', '/me')[0] == 200


def test_a_deleted_context_is_not_brought_back(services: Services, api: Api) -> None:
    from agent_memory.domain.contexts import create_context

    doomed = f'doomed{uuid.uuid4().hex[:8]}'
    create_context(services.control, services.store, doomed, {})
    services.control.delete_context(doomed)
    services.drop_context(doomed)
    assert context_db_name(doomed) not in _databases(services)
    # When a request still addresses it, Then it is refused and the database stays gone
    assert Api(doomed, 'am_made-up-key-that-was-never-minted').call('views', 'GET', '/me')[0] == 401
    assert context_db_name(doomed) not in _databases(services)
