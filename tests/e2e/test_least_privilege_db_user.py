"""The database user docs/deploy.md creates (a namespace EDITOR) is enough to run the service, and it is no more.

The guide's own SurrealQL runs as root on the real engine behind tests/support/ws_bridge.py; then the local gateway
(the same handlers the Lambdas run) signs in as that user over ws:// and goes through the guide's verification, a
context's whole life (its database created and removed), extraction, retrieval, the hourly sweeps and their REBUILD
INDEX. The engine enforces roles once a session has signed in, so the same bridge also shows what the user cannot do
and that weaker users do not work.
"""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.db.connection import Database, QueryFailed, context_db_name
from agent_memory.db.lifecycle_store import VECTOR_INDEXES
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.sdk import connect
from agent_memory.errors import StoreUnavailable
from tests.support.deploy_guide import database_user_surql
from tests.support.gateway import KEY, MGMT, Gateway
from tests.support.ports import free_port
from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

NAMESPACE, USER, PASSWORD = 'agent_memory', 'agent_memory', 'guide-db-password-0123456789abcdef'


def as_root(bridge: WsBridge, surql: str) -> list[dict[str, Any]]:
    """Run ``surql`` signed in as root (what an operator does in `surreal sql` or Studio); every statement must pass."""
    connection = connect(bridge.url)
    try:
        connection.signin({'username': ROOT_USER, 'password': ROOT_PASSWORD})
        statements: list[dict[str, Any]] = connection.query_raw(surql, {})['result']
    finally:
        connection.close()
    assert [s['status'] for s in statements] == ['OK'] * len(statements), statements
    return statements


@pytest.fixture(scope='module')
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[WsBridge, Gateway]]:
    bridge = WsBridge().start()
    as_root(bridge, database_user_surql(PASSWORD))  # before the gateway signs in: the bridge shares one session
    env = {'AGENT_MEMORY_DB_URL': bridge.url, 'AGENT_MEMORY_DB_NAMESPACE': NAMESPACE, 'AGENT_MEMORY_DB_USER': USER,
           'AGENT_MEMORY_DB_PASSWORD': PASSWORD, 'AGENT_MEMORY_DB_USER_LEVEL': 'namespace'}  # fmt: skip
    gateway = Gateway(tmp_path_factory.mktemp('least-privilege'), free_port(), env)
    yield bridge, gateway
    code, output = gateway.stop()
    bridge.close()
    assert code == 0, output
    assert 'failed' not in ''.join(line for line in output.splitlines(keepends=True) if '[local] sweep' in line), output


def request(gateway: Gateway, method: str, path: str, body: Any = None, key: str = KEY, wait: int = 0) -> tuple[int, Any]:
    headers = {'Authorization': f'Bearer {key}', 'Content-Type': 'application/json'}
    if wait:
        headers['Prefer'] = f'wait={wait}'
    data = json.dumps(body).encode() if body is not None else None
    call = urllib.request.Request(gateway.base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(call, timeout=60) as response:
            raw = response.read()
            return response.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        raw = error.read()
        return error.code, json.loads(raw) if raw else None


def test_the_namespace_editor_runs_the_guides_verification_and_a_contexts_whole_life(hosted: tuple[WsBridge, Gateway]) -> None:
    bridge, gateway = hosted
    # Given the service signed in as the guide's user (its cold start migrated `control` and bootstrapped `dev`)
    assert request(gateway, 'GET', '/api/v1/health', key='') == (200, {'status': 'ok', 'db': 'ok'})
    # When the guide's verification runs: a context (its own database), a key for its admin, a write, a read
    assert request(gateway, 'POST', '/api/v1/contexts/acme', {}, key=MGMT)[0] == 201
    status, minted = request(gateway, 'POST', '/api/v1/contexts/acme/principals/admin/keys/first', key=MGMT)
    assert status == 201, minted
    key = minted['secret']
    status, written = request(gateway, 'POST', '/api/v1/acme/facts', {'text': 'I moved to Lisbon last spring.'}, key=key, wait=20)
    assert status == 200 and written['status'] == 'done', written
    status, found = request(gateway, 'POST', '/api/v1/acme/query', {'query': 'Where do I live?', 'k': 3}, key=key)
    assert status == 200 and 'Lisbon' in found['hits'][0]['text'], found
    # Then the hourly sweep (every second under the test gateway: expiry, purge, REBUILD INDEX) keeps running, and the
    # context can be deleted (REMOVE DATABASE)
    time.sleep(2.5)
    assert request(gateway, 'DELETE', '/api/v1/contexts/acme', key=MGMT)[0] == 204
    databases = as_root_info(bridge)
    assert 'control' in databases and 'ctx_' + b'acme'.hex() not in databases
    assert request(gateway, 'POST', '/api/v1/acme/query', {'query': 'Where do I live?', 'k': 3}, key=key)[0] == 401


def as_root_info(bridge: WsBridge) -> list[str]:
    """The namespace's databases, read as root. Only after the gateway's requests: signing in changes the bridge's one
    session, which the gateway shares (its next sign-in, after a reconnect, would restore it)."""
    (_, info) = as_root(bridge, f'USE NS {NAMESPACE}; INFO FOR NS;')
    return sorted(info['result']['databases'])


def test_the_user_rebuilds_the_vector_indexes_as_the_hourly_sweep_does(hosted: tuple[WsBridge, Gateway]) -> None:
    bridge, _ = hosted
    # Given the guide's user and the bootstrapped context's database (the sweep rebuilds only above a growth threshold)
    db = Database(bridge.url, NAMESPACE, USER, PASSWORD, user_level='namespace')
    try:
        # When every HNSW index is rebuilt with the sweep's statement, Then the engine allows it
        for table, index in VECTOR_INDEXES:
            db.query(context_db_name('dev'), f'REBUILD INDEX {index} ON {table};')
    finally:
        db.close()


def test_the_user_cannot_manage_users_or_leave_its_namespace(hosted: tuple[WsBridge, Gateway]) -> None:
    bridge, _ = hosted
    # Given a connection signed in as the guide's user (the same identity as the gateway's)
    db = Database(bridge.url, NAMESPACE, USER, PASSWORD, user_level='namespace')
    try:
        # When it tries what the service never does, Then the engine refuses
        for statement in ("DEFINE USER intruder ON NAMESPACE PASSWORD 'x' ROLES OWNER;",
                          "DEFINE USER intruder ON ROOT PASSWORD 'x' ROLES OWNER;",
                          'USE NS elsewhere DB x; CREATE thing:1;'):  # fmt: skip
            with pytest.raises(QueryFailed):
                db.query('control', statement)
    finally:
        db.close()


def test_weaker_users_cannot_run_the_service(tmp_path: Path) -> None:
    bridge = WsBridge().start()
    try:
        # Given a namespace VIEWER and the guide's EDITOR defined as a database user instead
        as_root(bridge, f"DEFINE NAMESPACE {NAMESPACE}; USE NS {NAMESPACE}; "
                        f"DEFINE USER viewer ON NAMESPACE PASSWORD '{PASSWORD}' ROLES VIEWER; DEFINE DATABASE control; "
                        f"USE DB control; DEFINE USER dbuser ON DATABASE PASSWORD '{PASSWORD}' ROLES EDITOR;")  # fmt: skip
        # When the service's cold start migrates `control` as the viewer, Then the engine refuses the schema
        viewer = Database(bridge.url, NAMESPACE, 'viewer', PASSWORD, user_level='namespace')
        with pytest.raises(QueryFailed, match='Not enough permissions'):
            ensure_migrated(viewer, 'control', 'control')
        viewer.close()
        # and a database user, or the namespace user signing in at the wrong level, cannot even sign in
        for user, level in (('dbuser', 'namespace'), ('viewer', 'root')):
            with pytest.raises(StoreUnavailable, match='authentication'):
                Database(bridge.url, NAMESPACE, user, PASSWORD, user_level=level)
    finally:
        bridge.close()
