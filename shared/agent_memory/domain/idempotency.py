"""``Idempotency-Key`` on writes: same key + same body within 24 h replays; a different body is 409.

The stored answer is replayed only to a key that could make the same write now and read what the answer says: the
record keeps the scope the write went to and the writer's read region, and a key of the same principal without the grant
to write there, or whose read grant does not cover that region, gets the 403 the write itself would get (a record from
before migration 0030 counts as written everywhere and read with ``*``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any

from agent_memory.clock import utcnow
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.scopes import covered, region_within, within_region
from agent_memory.errors import BadRequest, Conflict, Forbidden
from agent_memory.plan_reads import StoredReply

WINDOW = dt.timedelta(hours=24)
MAX_KEY_LENGTH = 255


def body_hash(method: str, path: str, body: Any) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(',', ':'), default=str)
    return hashlib.sha256(f'{method}\0{path}\0{canonical}'.encode()).hexdigest()


def replay_or_run(
    store: MemoryWrites, caller: Caller, key: str | None, digest: str, run: Callable[[], tuple[int, dict[str, Any]]]
) -> tuple[int, dict[str, Any]]:
    """Return the stored response for a repeated key, or run the write (which stores its response atomically)."""
    if key is None:
        return run()
    if not key or len(key) > MAX_KEY_LENGTH:
        raise BadRequest(f'Idempotency-Key must be 1..{MAX_KEY_LENGTH} characters')
    stored = _stored(store, caller, key, digest)
    if stored is not None:
        return stored
    try:
        return run()
    except Conflict:
        stored = _stored(store, caller, key, digest)  # a concurrent request with the same key won
        if stored is not None:
            return stored
        raise


def may_replay(record: StoredReply, caller: Caller) -> bool:
    writes = caller.patterns('memory:write')
    may_write = covered(writes, '*') if record.write_scope is None else within_region(record.write_scope, writes)
    return may_write and region_within(record.read_region, caller.patterns('memory:read'))


def _stored(store: MemoryWrites, caller: Caller, key: str, digest: str) -> tuple[int, dict[str, Any]] | None:
    principal = caller.principal_id
    record = store.idempotency_record(principal, key)
    if record is None:
        return None
    if utcnow() - record.created_at > WINDOW:
        store.forget_idempotency(principal, key)
        return None
    if record.body_hash != digest:
        raise Conflict('Idempotency-Key was already used with a different request body')
    if not may_replay(record, caller):
        raise Forbidden('this key may not make that write or read its answer')
    return record.status, json.loads(record.response_json)
