"""The test process's environment, set before anything imports the service: an embedded in-memory SurrealDB (or,
with ``AGENT_MEMORY_TEST_DB=ws``, the real engine behind ``tests/support/ws_bridge.py`` over ``ws://`` with
credentials, as production connects), fixed secrets, and moto standing in for AWS with the extraction queue and
its dead-letter queue wired as the template wires them (maxReceiveCount 3). ``tests/conftest.py`` imports it first.
"""

from __future__ import annotations

import json
import os

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
        # the suite sends far more management requests than an operator would; its limit is tested on its own
        'AGENT_MEMORY_MANAGEMENT_REQUESTS_PER_MINUTE': '1000000',
        'AGENT_MEMORY_MANAGEMENT_BURST': '100000',
    }
)
if os.environ.get('AGENT_MEMORY_TEST_DB') == 'ws':
    from tests.support.ws_bridge import ROOT_PASSWORD, ROOT_USER, WsBridge

    WS_BRIDGE: WsBridge | None = WsBridge().start()
    os.environ.update({'AGENT_MEMORY_DB_URL': WS_BRIDGE.url, 'AGENT_MEMORY_DB_USER': ROOT_USER, 'AGENT_MEMORY_DB_PASSWORD': ROOT_PASSWORD})
else:
    WS_BRIDGE = None

# moto for the whole session: the extraction queue and its dead-letter queue are real boto3 SQS against moto.
import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

_aws = mock_aws()
_aws.start()
SQS = boto3.client('sqs')
DLQ_URL = SQS.create_queue(QueueName='extraction-dlq')['QueueUrl']
DLQ_ARN = SQS.get_queue_attributes(QueueUrl=DLQ_URL, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
QUEUE_URL = SQS.create_queue(
    QueueName='extraction',
    Attributes={'VisibilityTimeout': '0', 'RedrivePolicy': json.dumps({'deadLetterTargetArn': DLQ_ARN, 'maxReceiveCount': '3'})},
)['QueueUrl']
QUEUE_ARN = SQS.get_queue_attributes(QueueUrl=QUEUE_URL, AttributeNames=['QueueArn'])['Attributes']['QueueArn']
os.environ['AGENT_MEMORY_QUEUE_URL'] = QUEUE_URL
