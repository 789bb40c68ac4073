"""The extraction job queue: SQS in AWS, an in-process queue under `make dev`.

A job names a context and the turns to extract, in order. Messages are at-least-once: the worker
is idempotent per turn, so a duplicate or redelivered job changes nothing.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Protocol

MAX_SQS_BATCH = 10


@dataclass(frozen=True)
class ExtractionJob:
    context_id: str
    turn_ids: tuple[str, ...]

    def to_json(self) -> str:
        return json.dumps({'context': self.context_id, 'turnIds': list(self.turn_ids)})

    @classmethod
    def from_json(cls, body: str) -> ExtractionJob:
        data = json.loads(body)
        if not isinstance(data, dict) or not isinstance(data.get('context'), str) or not isinstance(data.get('turnIds'), list):
            raise ValueError('not an extraction job')
        return cls(data['context'], tuple(str(t) for t in data['turnIds']))


class JobQueue(Protocol):
    def send(self, jobs: list[ExtractionJob]) -> None: ...


class SqsJobQueue:
    """Sends jobs with boto3. The client is built on the first send and kept for the container's life: importing
    boto3 and building a client costs more than a plain request, and most requests of most functions never send."""

    def __init__(self, queue_url: str, client: Any = None) -> None:
        self.queue_url = queue_url
        self._client = client
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    import boto3  # type: ignore[import-untyped]  # boto3 ships no type stubs

                    self._client = boto3.client('sqs')
        return self._client

    def send(self, jobs: list[ExtractionJob]) -> None:
        for start in range(0, len(jobs), MAX_SQS_BATCH):
            chunk = jobs[start : start + MAX_SQS_BATCH]
            entries = [{'Id': str(i), 'MessageBody': job.to_json()} for i, job in enumerate(chunk)]
            result = self.client.send_message_batch(QueueUrl=self.queue_url, Entries=entries)
            if result.get('Failed'):
                raise RuntimeError(f'SQS refused {len(result["Failed"])} extraction job(s): {result["Failed"][0].get("Message")}')
