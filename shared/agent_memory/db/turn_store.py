"""Turn-level statements for the extraction pipeline: status, context window and vocabulary."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from typing import Any

from agent_memory.db import to_rows
from agent_memory.db.memory_store import VISIBLE, MemoryStore, visibility_params
from agent_memory.db.records import rid
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.directives import UncertaintyRow
from agent_memory.rows.memory import NamedEntity


class TurnStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def get_turn(self, turn_id: str) -> TurnRow | None:
        row = self.store.q('SELECT * FROM ONLY $id;', id=rid('turn', turn_id))[0]
        return to_rows.turn(row) if row else None

    def pending_contents(self, turn_ids: Sequence[str]) -> list[str]:
        """The text of those turns whose extraction is not done yet, in one round trip."""
        rows = self.store.q("SELECT VALUE content FROM $ids WHERE extraction_status != 'done';", ids=[rid('turn', t) for t in turn_ids])
        return [str(content) for content in rows[0] or []]

    def recent_turns(self, session_id: str, before_seq: int, limit: int, patterns: Sequence[str]) -> list[TurnRow]:
        """The session's last turns before ``before_seq`` that ``patterns`` may read (each turn by its own scope)."""
        rows = self.store.rows(
            'SELECT id, session_key, role, content, observed_at, seq, speaker, scope_sets FROM turn '
            f'WHERE session_key = $session_key AND seq < $seq AND {VISIBLE} ORDER BY seq DESC LIMIT $limit;',
            session_key=session_id,
            seq=before_seq,
            limit=limit,
            **visibility_params(patterns),
        )
        return [to_rows.turn(row) for row in reversed(rows)]

    def session_has_turns(self, session_id: str) -> bool:
        """Whether any turn exists (whoever may read it): only ever used to refuse caching, never shown."""
        return bool(self.store.rows('SELECT VALUE id FROM turn WHERE session_key = $s LIMIT 1;', s=session_id))

    def mark(self, turn_id: str, status: str, error: str | None = None) -> None:
        """Record progress or failure; never touches a turn whose extraction is already done."""
        self.store.q(
            "UPDATE $id SET extraction_status = $status, extraction_error = $error WHERE extraction_status != 'done';",
            id=rid('turn', turn_id),
            status=status,
            error=error,
        )

    def mark_enqueued(self, turn_ids: Sequence[str], now: dt.datetime) -> None:
        self.store.q('UPDATE $ids SET enqueued_at = $now;', ids=[rid('turn', t) for t in turn_ids], now=now)

    def start_attempt(self, turn_id: str) -> int:
        rows: list[Any] = self.store.rows(
            "UPDATE $id SET extraction_status = 'running', extraction_attempts += 1 WHERE extraction_status != 'done' "
            'RETURN VALUE extraction_attempts;',
            id=rid('turn', turn_id),
        )
        return int(rows[0]) if rows else 0

    def stale_pending(self, before: dt.datetime, limit: int) -> list[str]:
        """Turns accepted but never extracted: the queue send failed (``queued``), or the worker died mid-attempt
        and no redelivery is coming (``running``: a killed local gateway, a message dead-lettered after a crash).
        The hourly sweep re-sends them; a duplicate of a live attempt is harmless (the apply refuses a done turn)."""
        rows = self.store.rows(
            "SELECT VALUE record::id(id) FROM turn WHERE extraction_status IN ['queued', 'running'] "
            'AND (enqueued_at ?? created_at) < $before ORDER BY created_at LIMIT $limit;',
            before=before,
            limit=limit,
        )
        return [str(r) for r in rows]

    def vocabulary(self, patterns: Sequence[str], limit: int) -> tuple[list[NamedEntity], list[str], list[str]]:
        """Recently used entity names, attribute keys and relation labels visible to the speaker (bounded)."""
        entities, keys, labels = self.store.db.query(
            self.store.database,
            f'SELECT type, name, updated_at FROM entity WHERE {VISIBLE} ORDER BY updated_at DESC LIMIT $limit;'
            f'SELECT key, created_at FROM attribute WHERE {VISIBLE} ORDER BY created_at DESC LIMIT $sample;'
            f'SELECT label, created_at FROM relates_to WHERE {VISIBLE} ORDER BY created_at DESC LIMIT $sample;',
            {'limit': limit, 'sample': limit * 4, **visibility_params(patterns)},
        )
        unique_keys = list(dict.fromkeys(r['key'] for r in keys))[:limit]
        named = [NamedEntity(type=r['type'], name=r['name']) for r in entities or []]
        return named, unique_keys, list(dict.fromkeys(r['label'] for r in labels))[:limit]

    def open_uncertainties(self, patterns: Sequence[str], limit: int) -> list[UncertaintyRow]:
        rows = self.store.rows(
            f'SELECT * FROM uncertainty WHERE resolved = false AND {VISIBLE} ORDER BY created_at DESC LIMIT $limit;',
            limit=limit,
            **visibility_params(patterns),
        )
        return [to_rows.uncertainty(row) for row in rows]
