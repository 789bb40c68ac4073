"""Fixtures shared by integration modules: the LLM stages routed to the local test server, seeded worlds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agent_memory.adapters.openai_composer import LlmComposer
from agent_memory.composition import Services
from agent_memory.domain.extraction_pipeline import Extractors
from agent_memory.extraction.llm import LlmExtractor
from agent_memory.extraction.structured_output import LearnedModes
from tests.support.chat import seed_alice
from tests.support.handlers import Api
from tests.support.llm_server import LlmTestServer
from tests.support.office import Office, make_office


@pytest.fixture
def llm(services: Services) -> Iterator[LlmTestServer]:
    """Route /chat synthesis to the test server for this test (the real LlmComposer and openai client)."""
    server = LlmTestServer(echo_sources=True).start()
    previous = services._composer
    services._composer = LlmComposer(server.base_url, 'test-model', None, 5.0)
    yield server
    services._composer = previous
    server.stop()


@pytest.fixture
def with_llm(services: Services, llm_server: LlmTestServer, monkeypatch: pytest.MonkeyPatch) -> LlmTestServer:
    """Route the worker's LLM extraction stage to the test server for this test (stage 0 unchanged)."""
    llm = LlmExtractor(base_url=llm_server.base_url, model='test-model', api_key='sk-test', timeout_seconds=2, learned=LearnedModes())
    monkeypatch.setattr(services, 'extractors', Extractors(stage0=services.extractors.stage0, llm=llm))
    return llm_server


@pytest.fixture
def seeded(api: Api) -> Api:
    """The admin's context where Alice is CTO and works at Acme."""
    return seed_alice(api)


@pytest.fixture
def office(services: Services, context_id: str, api: Api) -> Office:
    return make_office(services, context_id, api)
