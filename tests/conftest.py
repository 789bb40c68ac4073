"""Suite-wide fixtures. The environment (embedded SurrealDB or the ws bridge, secrets, moto SQS) is set up by
``tests/support/environment.py`` before the service is imported; helpers live in ``tests/support/``.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import tests.support.environment  # noqa: F401  # first: the service reads this environment when it is imported
from agent_memory.composition import Services, get_services
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.auth import Caller, authenticate
from agent_memory.domain.contexts import create_context, mint_context_key
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.worker import Worker

TIERS = ('unit', 'integration', 'e2e')  # tests/<tier>/…: the folder a test lives in is its marker


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with its tier, from its folder, so ``pytest -m unit`` runs only the fast, self-contained ones."""
    tests_root = Path(__file__).resolve().parent
    for item in items:
        folder = item.path.resolve().relative_to(tests_root).parts[0]
        if folder in TIERS:
            item.add_marker(getattr(pytest.mark, folder))


@pytest.fixture(scope='session')
def services() -> Services:
    return get_services()


@pytest.fixture
def context_id(services: Services) -> Iterator[str]:
    """A fresh context (own database) per test: tests never see each other's data."""
    cid = f't{uuid.uuid4().hex[:12]}'
    create_context(services.control, services.store, cid, {})
    yield cid
    services.control.delete_context(cid)
    services.drop_context(cid)


@pytest.fixture
def store(services: Services, context_id: str) -> MemoryStore:
    return services.store(context_id)


@pytest.fixture
def api(services: Services, context_id: str) -> Api:
    return Api(context_id, mint_context_key(services.control, context_id, 'admin', 'test'))


@pytest.fixture
def admin(services: Services, context_id: str, api: Api) -> Caller:
    return authenticate(services.control, services.store, {'authorization': f'Bearer {api.key}'}, context_id)


@pytest.fixture
def worker() -> Worker:
    return Worker()


@pytest.fixture
def llm_server() -> Iterator[LlmTestServer]:
    """A started OpenAI-compatible test server, stopped after the test."""
    server = LlmTestServer().start()
    try:
        yield server
    finally:
        server.stop()
