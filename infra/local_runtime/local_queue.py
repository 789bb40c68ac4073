"""An in-process stand-in for SQS + the Lambda event source mapping, for `make dev`.

Jobs go to the same worker handler in the same SQS event shape. A failed record comes back after a
short delay with its receive count raised; after ``max_receives`` it moves to a dead-letter list,
as the template's redrive policy would.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent_memory.jobs import ExtractionJob
from local_runtime.events import sqs_record

QUEUE_ARN = 'arn:aws:sqs:local:000000000000:extraction'


class Invoker(Protocol):
    def invoke(self, code_dir: Path, event: dict[str, Any]) -> Any: ...


@dataclass
class _Message:
    message_id: str
    body: str
    sent_ms: int
    receive_count: int = 0


class LocalQueue:
    def __init__(self, invoker: Invoker, worker_dir: Path, max_receives: int = 3, batch_size: int = 5, retry_delay: float = 2.0) -> None:
        self.invoker, self.worker_dir = invoker, worker_dir
        self.max_receives, self.batch_size, self.retry_delay = max_receives, batch_size, retry_delay
        self.dead_letters: list[_Message] = []
        self._pending: queue.Queue[_Message] = queue.Queue()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name='local-extraction-worker', daemon=True)

    def start(self) -> LocalQueue:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def send(self, jobs: list[ExtractionJob]) -> None:
        for job in jobs:
            self._pending.put(_Message(str(uuid.uuid4()), job.to_json(), int(time.time() * 1000)))

    def _run(self) -> None:
        while not self._stop.is_set():
            batch = self._next_batch()
            if batch:
                self._deliver(batch)

    def _next_batch(self) -> list[_Message]:
        try:
            batch = [self._pending.get(timeout=0.2)]
        except queue.Empty:
            return []
        while len(batch) < self.batch_size:
            try:
                batch.append(self._pending.get_nowait())
            except queue.Empty:
                break
        return batch

    def _deliver(self, batch: list[_Message]) -> None:
        for message in batch:
            message.receive_count += 1
        records = [sqs_record(m.message_id, m.body, m.message_id, m.receive_count, QUEUE_ARN, m.sent_ms) for m in batch]
        try:
            result = self.invoker.invoke(self.worker_dir, {'Records': records})
            failed = {f['itemIdentifier'] for f in result.get('batchItemFailures', [])}
        except Exception as exc:  # like Lambda: a crashed invocation fails the whole batch
            print(f'[local] extraction worker crashed: {exc}', file=sys.stderr)
            failed = {m.message_id for m in batch}
        for message in batch:
            if message.message_id in failed:
                self._retry_later(message)

    def _retry_later(self, message: _Message) -> None:
        if message.receive_count >= self.max_receives:
            self.dead_letters.append(message)
            print(f'[local] extraction job moved to the dead-letter list after {message.receive_count} receives', file=sys.stderr)
            return
        timer = threading.Timer(self.retry_delay, self._pending.put, args=(message,))
        timer.daemon = True
        timer.start()
