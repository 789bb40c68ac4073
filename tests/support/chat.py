"""/chat through its handler, and the small world the cache tests ask about (Alice, CTO at Acme)."""

from __future__ import annotations

from typing import Any

from tests.support.handlers import Api
from tests.support.worker import Worker

QUESTION = "What is Alice's role at Acme?"
ALICE = {'type': 'person', 'name': 'Alice'}
SHARED = {'memory:read': ['shared/*'], 'memory:write': ['shared/*']}  # grants of a principal confined to 'shared'


def chat(api: Api, message: str = QUESTION, **extra: Any) -> dict[str, Any]:
    """A /chat call that must answer 200; its body."""
    code, body, _ = api.call('chat', 'POST', '/chat', {'message': message, **extra})
    assert code == 200, body
    return body


def remember(api: Api, *triples: dict[str, Any]) -> None:
    code, body, _ = api.call('facts', 'POST', '/facts', {'infer': 'triples', 'triples': list(triples)})
    assert code == 200, body


def role(value: str) -> dict[str, Any]:
    return {'entity': ALICE, 'key': 'role', 'value': value}


def seed_alice(api: Api) -> Api:
    """Alice is CTO and works at Acme."""
    remember(api, role('CTO'), {'entity': ALICE, 'key': 'employer', 'value': 'Acme'})
    return api


def tell(api: Api, worker: Worker, *texts: str) -> None:
    """Write each text as a turn for full extraction, then let the worker extract them all."""
    for text in texts:
        code, body, _ = api.call('facts', 'POST', '/facts', {'text': text})
        assert code == 202, body
    worker.drain()
