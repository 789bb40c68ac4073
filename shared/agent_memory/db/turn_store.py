"""Turn-level statements for the extraction pipeline: status, context window and vocabulary."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from agent_memory.db import to_rows
from agent_memory.db.memory_store import VISIBLE, MemoryStore, visibility_params
from agent_memory.db.records import rid
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.directives import UncertaintyRow
from agent_memory.rows.memory import VocabularyRow, VocabularySample

_RECENT_TURNS = (
    'SELECT id, session_key, role, content, observed_at, seq, speaker, principal, scope_sets, origin FROM turn '
    f'WHERE session_key = $session_key AND seq < $seq AND {VISIBLE} ORDER BY seq DESC LIMIT $limit;'
)
_OPEN_UNCERTAINTIES = f'SELECT * FROM uncertainty WHERE resolved = false AND {VISIBLE} ORDER BY created_at DESC LIMIT $open_limit;'


class TurnStore:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    def get_turn(self, turn_id: str) -> TurnRow | None:
        row = self.store.q('SELECT * FROM ONLY $id;', id=rid('turn', turn_id))[0]
        return to_rows.turn(row) if row else None

    def start_job(self, turn_ids: Sequence[str]) -> dict[str, TurnRow]:
        """One round trip at the start of a job: every turn not done yet counts an attempt and shows ``running``; the
        job's turns as they are then (a turn done by an earlier delivery keeps ``done``; an unknown id is absent)."""
        ids = [rid('turn', t) for t in turn_ids]
        _, rows = self.store.q(
            "UPDATE $ids SET extraction_status = 'running', extraction_attempts += 1 WHERE extraction_status != 'done' RETURN NONE;"
            'SELECT * FROM $ids;',
            ids=ids,
        )
        turns = [to_rows.turn(row) for row in rows or []]
        return {t.id: t for t in turns}

    def context_window(
        self, session_id: str | None, before_seq: int, limit: int, patterns: Sequence[str], open_limit: int
    ) -> tuple[list[TurnRow], list[UncertaintyRow]]:
        """One round trip: the session's last turns before ``before_seq`` and the newest open uncertainties that
        ``patterns`` may read (each turn and uncertainty by its own scope)."""
        recent, doubts = self.store.q(
            _RECENT_TURNS + _OPEN_UNCERTAINTIES,
            session_key=session_id,
            seq=before_seq,
            limit=limit,
            open_limit=open_limit,
            **visibility_params(patterns),
        )
        window = [to_rows.turn(row) for row in reversed(recent or [])] if session_id is not None else []
        return window, [to_rows.uncertainty(row) for row in doubts or []]

    def recent_turns(self, session_id: str, before_seq: int, limit: int, patterns: Sequence[str]) -> list[TurnRow]:
        """The session's last turns before ``before_seq`` that ``patterns`` may read (each turn by its own scope)."""
        rows = self.store.rows(
            _RECENT_TURNS,
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

    def vocabulary(self, patterns: Sequence[str], limit: int, sample: int) -> VocabularySample:
        """The newest ``limit`` entities and ``sample`` attributes and relations visible to ``patterns``, in one round trip
        (each statement walks its time index backward)."""
        entities, attributes, relations = self.store.db.query(
            self.store.database,
            f'SELECT id, type, name, updated_at FROM entity WHERE {VISIBLE} ORDER BY updated_at DESC LIMIT $limit;'
            f'SELECT id, key, created_at FROM attribute WHERE {VISIBLE} ORDER BY created_at DESC LIMIT $sample;'
            f'SELECT id, label, created_at FROM relates_to WHERE {VISIBLE} ORDER BY created_at DESC LIMIT $sample;',
            {'limit': limit, 'sample': sample, **visibility_params(patterns)},
        )
        return VocabularySample(
            entities=tuple(
                VocabularyRow(stamp=r['updated_at'], key=tuple(r['id'].id), text=r['name'], entity_type=r['type']) for r in entities or []
            ),
            attributes=tuple(VocabularyRow(stamp=r['created_at'], key=(str(r['id'].id),), text=r['key']) for r in attributes or []),
            relations=tuple(VocabularyRow(stamp=r['created_at'], key=(str(r['id'].id),), text=r['label']) for r in relations or []),
        )
