"""Sessions as the API shows them: create one, list its turns, close it (CONTRACT §10)."""

from __future__ import annotations

from typing import Any

from agent_memory.clock import new_id, utcnow, when
from agent_memory.domain import sessions
from agent_memory.domain.auth import Caller
from agent_memory.domain.ports import MemoryWrites
from agent_memory.domain.write_target import write_region
from agent_memory.errors import Conflict, NotFound
from agent_memory.models import SessionCreate
from agent_memory.rows.conversation import SessionRow


def create_session(store: MemoryWrites, caller: Caller, request: SessionCreate) -> dict[str, Any]:
    scope_sets = write_region(caller, request.scopes, None)
    session_id = request.id or f'sess_{new_id()}'
    taken = Conflict(f'session {session_id!r} already exists')
    if sessions.readable(store, caller, session_id) is not None:  # one the caller can see is reused, never shadowed
        raise taken
    try:
        row = store.create_session(sessions.new_session(caller, session_id, scope_sets, utcnow(), request.metadata))
    except Conflict as exc:
        raise taken from exc
    return {'id': session_id, 'scopes': row.scope_sets, 'metadata': row.metadata, 'createdAt': when(row.created_at)}


def readable_session(store: MemoryWrites, caller: Caller, session_id: str) -> SessionRow:
    session = sessions.readable(store, caller, session_id)
    if session is None:
        raise NotFound('session not found')
    return session


def list_turns(store: MemoryWrites, caller: Caller, session_id: str, limit: int, offset: int) -> dict[str, Any]:
    session = readable_session(store, caller, session_id)
    rows = store.list_turns(sessions.key_of(session), caller.patterns('memory:read'), limit + 1, offset)
    turns = [
        {
            'id': r.id,
            'session': session_id,
            'role': r.role,
            'content': r.content,
            'seq': r.seq,
            'createdAt': when(r.created_at),
            'observedAt': when(r.observed_at),
            'extraction': r.extraction_status,
        }
        for r in rows[:limit]
    ]
    has_more = len(rows) > limit
    return {'turns': turns, 'page': {'hasMore': has_more, 'nextCursor': str(offset + limit) if has_more else None}}


def close_session(store: MemoryWrites, caller: Caller, session_id: str) -> None:
    session = sessions.writable(store, caller, session_id)
    if session is None:
        raise NotFound('session not found')
    store.close_session(sessions.key_of(session), utcnow())
