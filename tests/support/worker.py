"""Drives the extraction worker Lambda from the (moto) SQS queue the API functions send to."""

from __future__ import annotations

from typing import Any

from local_runtime.events import LocalContext, sqs_record
from tests.support.environment import DLQ_URL, QUEUE_ARN, QUEUE_URL, SQS
from tests.support.handlers import load_function


class Worker:
    """Drives the extraction worker Lambda from the (moto) SQS queue the API functions send to."""

    def __init__(self) -> None:
        self.sqs = SQS
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
        # Looked at, not taken: visible again at once, so the next test's Worker() drains it. With the DLQ's default 30 s
        # a dead letter read here hid from that drain and surfaced in a later test of the same process.
        response = self.sqs.receive_message(QueueUrl=DLQ_URL, MaxNumberOfMessages=10, VisibilityTimeout=0)
        return list(response.get('Messages', []))
