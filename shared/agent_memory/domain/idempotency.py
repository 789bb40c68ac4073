"""``Idempotency-Key`` on writes: same key + same body within 24 h replays; a different body is 409."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any

from agent_memory.clock import utcnow
from agent_memory.db.memory_store import MemoryStore
from agent_memory.errors import BadRequest, Conflict

WINDOW = dt.timedelta(hours=24)
MAX_KEY_LENGTH = 255


def body_hash(method: str, path: str, body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(',', ':'), default=str)
    return hashlib.sha256(f'{method}\0{path}\0{canonical}'.encode()).hexdigest()


def replay_or_run(
    store: MemoryStore, principal: str, key: str | None, digest: str, run: Callable[[], tuple[int, dict[str, Any]]]
) -> tuple[int, dict[str, Any]]:
    """Return the stored response for a repeated key, or run the write (which stores its response atomically)."""
    if key is None:
        return run()
    if not key or len(key) > MAX_KEY_LENGTH:
        raise BadRequest(f'Idempotency-Key must be 1..{MAX_KEY_LENGTH} characters')
    stored = _stored(store, principal, key, digest)
    if stored is not None:
        return stored
    try:
        return run()
    except Conflict:
        stored = _stored(store, principal, key, digest)  # a concurrent request with the same key won
        if stored is not None:
            return stored
        raise


def _stored(store: MemoryStore, principal: str, key: str, digest: str) -> tuple[int, dict[str, Any]] | None:
    record = store.idempotency_record(principal, key)
    if record is None:
        return None
    if utcnow() - record.created_at > WINDOW:
        store.forget_idempotency(principal, key)
        return None
    if record.body_hash != digest:
        raise Conflict('Idempotency-Key was already used with a different request body')
    return record.status, json.loads(record.response_json)
