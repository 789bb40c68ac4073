"""Suite-wide set-up: an embedded in-memory SurrealDB, fixed secrets, and helpers to call handlers.

``AGENT_MEMORY_TEST_DB=ws`` runs the suite against the hosted-database path instead: the service connects
over ``ws://`` with credentials (as production does) to the real engine behind ``tests/ws_bridge.py``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

os.environ.update(
    {
        'AWS_DEFAULT_REGION': 'us-east-1',
        'AWS_ACCESS_KEY_ID': 'testing',
        'AWS_SECRET_ACCESS_KEY': 'testing',
        'AGENT_MEMORY_DB_URL': 'mem://',
        'AGENT_MEMORY_KEY_SECRET': 'test-key-secret',
        'AGENT_MEMORY_MANAGEMENT_KEY': 'test-management-key',
        'POWERTOOLS_LOG_LEVEL': 'WARNING',
        'POWERTOOLS_METRICS_NAMESPACE': 'AgentMemoryTest',
    }
)
if os.environ.get('AGENT_MEMORY_TEST_DB') == 'ws':
    from tests.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

    WS_BRIDGE: WsBridge | None = WsBridge().start()
    os.environ.update({'AGENT_MEMORY_DB_URL': WS_BRIDGE.url, 'AGENT_MEMORY_DB_USER': ROOT_USER, 'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD})
else:
    WS_BRIDGE = None

# moto stands in for AWS for the whole session: the extraction queue (with its dead-letter queue) is real
# boto3 SQS against moto, exactly as the template wires it (maxReceiveCount 3).
import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

_aws = mock_aws()
_aws.start()
_sqs = boto3.client('sqs')
DLQ_URL = _sqs.create_queue(QueueName='extraction-dlq')['QueueUrl']
_dlq_arn = _sqs.get_queue_attributes(QueueUrl=DLQ_URL, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
QUEUE_URL = _sqs.create_queue(
    QueueName='extraction',
    Attributes={'VisibilityTimeout': '0', 'RedrivePolicy': json.dumps({'deadLetterTargetArn': _dlq_arn, 'maxReceiveCount': '3'})},
)['QueueUrl']
QUEUE_ARN = _sqs.get_queue_attributes(QueueUrl=QUEUE_URL, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
os.environ['AGENT_MEMORY_QUEUE_URL'] = QUEUE_URL

from agent_memory.composition import Services, get_services  # noqa: E402
from agent_memory.db.memory_store import MemoryStore  # noqa: E402
from agent_memory.domain.auth import Caller  # noqa: E402
from agent_memory.domain.contexts import create_context, mint_context_key  # noqa: E402
from local_runtime.events import LocalContext, http_event, sqs_record  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MANAGEMENT_KEY = 'test-management-key'
_handlers: dict[str, ModuleType] = {}


def load_function(name: str) -> ModuleType:
    """Import ``functions/<name>/app.py`` the way Lambda would (each folder is its own code root)."""
    if name not in _handlers:
        spec = importlib.util.spec_from_file_location(f'function_{name}_app', ROOT / 'functions' / name / 'app.py')
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _handlers[name] = module
    return _handlers[name]


class Api:
    """Calls Lambda handlers with API Gateway v2 events for one context and its admin key."""

    def __init__(self, context_id: str, key: str) -> None:
        self.context_id = context_id
        self.key = key

    def call_raw(self, function: str, method: str, path: str, body: Any = None, *, key: str | None = None,
                 query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
        """The handler's raw result (status, headers, body text), e.g. for server-sent events."""
        all_headers = {'authorization': f'Bearer {key or self.key}', **(headers or {})}
        full_path = path if path.startswith('/api/') else f'/api/v1/{self.context_id}{path}'
        event = http_event(method, full_path, body=body, headers=all_headers, query=query)
        result: dict[str, Any] = load_function(function).lambda_handler(event, LocalContext())
        return result

    def call(self, function: str, method: str, path: str, body: Any = None, *, key: str | None = None,
             query: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:  # fmt: skip
        result = self.call_raw(function, method, path, body, key=key, query=query, headers=headers)
        raw = result.get('body') or ''
        return result['statusCode'], (json.loads(raw) if raw else None), result.get('headers', {})


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
    from agent_memory.domain.auth import authenticate

    return authenticate(services.control, services.store, {'authorization': f'Bearer {api.key}'}, context_id)


class Worker:
    """Drives the extraction worker Lambda from the (moto) SQS queue the API functions send to."""

    def __init__(self) -> None:
        self.sqs = _sqs
        self.queue_url = QUEUE_URL
        for url in (QUEUE_URL, DLQ_URL):  # start empty (PurgeQueue is rate-limited to once a minute)
            while messages := self.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get('Messages', []):
                for message in messages:
                    self.sqs.delete_message(QueueUrl=url, ReceiptHandle=message['ReceiptHandle'])

    def receive(self, max_messages: int = 10) -> list[dict[str, Any]]:
        response = self.sqs.receive_message(QueueUrl=QUEUE_URL, MaxNumberOfMessages=max_messages,
                                            AttributeNames=['All'], WaitTimeSeconds=0)  # fmt: skip
        return list(response.get('Messages', []))

    def deliver(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """One Lambda invocation with these messages; successes are deleted as the event source mapping would."""
        records = [sqs_record(m['MessageId'], m['Body'], m['ReceiptHandle'], int(m['Attributes']['ApproximateReceiveCount']),
                              QUEUE_ARN, int(m['Attributes']['SentTimestamp'])) for m in messages]  # fmt: skip
        result: dict[str, Any] = load_function('extraction_worker').lambda_handler({'Records': records}, LocalContext())
        failed = {f['itemIdentifier'] for f in result['batchItemFailures']}
        for message in messages:
            if message['MessageId'] not in failed:
                self.sqs.delete_message(QueueUrl=QUEUE_URL, ReceiptHandle=message['ReceiptHandle'])
        return result

    def drain(self, rounds: int = 10) -> int:
        """Deliver until the queue is empty (failed messages come back at once: visibility timeout 0)."""
        delivered = 0
        for _ in range(rounds):
            messages = self.receive()
            if not messages:
                return delivered
            self.deliver(messages)
            delivered += len(messages)
        return delivered

    def dead_letters(self) -> list[dict[str, Any]]:
        return list(self.sqs.receive_message(QueueUrl=DLQ_URL, MaxNumberOfMessages=10).get('Messages', []))


@pytest.fixture
def worker() -> Worker:
    return Worker()
