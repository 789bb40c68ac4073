"""Build the AWS event shapes our handlers receive (API Gateway HTTP API v2, EventBridge schedule)."""

from __future__ import annotations

import base64
import datetime as dt
import json
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode


def http_event(
    method: str, path: str, *, route_key: str | None = None, path_parameters: dict[str, str] | None = None,
    body: Any = None, headers: dict[str, str] | None = None, query: dict[str, str] | str | None = None,
    source_ip: str = '127.0.0.1',
) -> dict[str, Any]:  # fmt: skip
    """An API Gateway HTTP API payload v2.0 event, as the real gateway would send it."""
    raw_query = query if isinstance(query, str) else urlencode(query or {})
    if body is not None and not isinstance(body, (str, bytes)):
        body = json.dumps(body)
    is_base64 = isinstance(body, bytes)
    if isinstance(body, bytes):
        body = base64.b64encode(body).decode()
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    if body is not None:
        lowered.setdefault('content-type', 'application/json')
    now = dt.datetime.now(dt.UTC)
    request_id = uuid.uuid4().hex
    event: dict[str, Any] = {
        'version': '2.0',
        'routeKey': route_key or f'{method} {path}',
        'rawPath': path,
        'rawQueryString': raw_query,
        'headers': lowered,
        'requestContext': {
            'accountId': '000000000000',
            'apiId': 'local',
            'domainName': 'localhost',
            'domainPrefix': 'localhost',
            'http': {
                'method': method,
                'path': path,
                'protocol': 'HTTP/1.1',
                'sourceIp': source_ip,
                'userAgent': lowered.get('user-agent', 'local'),
            },
            'requestId': request_id,
            'routeKey': route_key or f'{method} {path}',
            'stage': '$default',
            'time': now.strftime('%d/%b/%Y:%H:%M:%S +0000'),
            'timeEpoch': int(now.timestamp() * 1000),
        },  # fmt: skip
        'isBase64Encoded': is_base64,
    }
    if raw_query:
        params: dict[str, str] = {}
        for key, value in parse_qsl(raw_query, keep_blank_values=True):
            params[key] = f'{params[key]},{value}' if key in params else value
        event['queryStringParameters'] = params
    if path_parameters:
        event['pathParameters'] = path_parameters
    if body is not None:
        event['body'] = body
    return event


def schedule_event(rule: str) -> dict[str, Any]:
    return {
        'version': '0',
        'id': str(uuid.uuid4()),
        'detail-type': 'Scheduled Event',
        'source': 'aws.events',
        'account': '000000000000',
        'time': dt.datetime.now(dt.UTC).strftime('%Y-%m-%dT%H:%M:%SZ'),
        'region': 'us-east-1',
        'resources': [f'arn:aws:events:us-east-1:000000000000:rule/{rule}'],
        'detail': {},
    }


@dataclass
class LocalContext:
    """The subset of the Lambda context object that Powertools reads."""

    function_name: str = 'local'
    memory_limit_in_mb: int = 512
    invoked_function_arn: str = 'arn:aws:lambda:us-east-1:000000000000:function:local'
    aws_request_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    function_version: str = '$LATEST'
    log_group_name: str = '/aws/lambda/local'
    log_stream_name: str = 'local'

    def get_remaining_time_in_millis(self) -> int:
        return 300_000


def sqs_record(message_id: str, body: str, receipt_handle: str, receive_count: int, queue_arn: str, sent_ms: int) -> dict[str, Any]:
    """One record of an SQS → Lambda event, as the event source mapping delivers it."""
    return {
        'messageId': message_id,
        'receiptHandle': receipt_handle,
        'body': body,
        'attributes': {
            'ApproximateReceiveCount': str(receive_count),
            'SentTimestamp': str(sent_ms),
            'SenderId': 'local',
            'ApproximateFirstReceiveTimestamp': str(sent_ms),
        },
        'messageAttributes': {},
        'md5OfBody': '',
        'eventSource': 'aws:sqs',
        'eventSourceARN': queue_arn,
        'awsRegion': 'us-east-1',
    }
