"""The turn rows a write stores and the chunks each turn is split into for retrieval.

What of a turn is evidence depends on where it came from (``origin``): a turn ingested through /facts is evidence whole,
whatever its role; of a /chat message only its statements are (a question states nothing); a reply /chat generated is
never evidence (CONTRACT §7.1)."""

from __future__ import annotations

import datetime as dt

from agent_memory.clock import new_id
from agent_memory.domain.auth import Caller
from agent_memory.domain.chunks import chunk_id, split_text
from agent_memory.domain.statements import statements
from agent_memory.rows.scopes import ScopeSets
from agent_memory.write_ops import CreateChunk, CreateTurn


def new_turn(
    caller: Caller,
    role: str,
    text: str,
    session_key: str,
    scope_sets: ScopeSets,
    now: dt.datetime,
    *,
    observed_at: dt.datetime | None = None,
    status: str | None = None,
    category: str | None = None,
    speaker: str | None = None,
    origin: str | None = None,
) -> CreateTurn:
    """A turn ``status`` ``queued`` waits for extraction; ``done`` was reconciled in its own write; None never is."""
    return CreateTurn(
        id=new_id(),
        session_key=session_key,
        role=role,
        content=text,
        principal=caller.principal_id,
        acting_principal=caller.acting_principal_id,
        scope_sets=scope_sets,
        read_region=caller.patterns('memory:read'),  # bounds what extraction may send to an LLM with this turn
        created_at=now,
        observed_at=observed_at or now,
        extraction_status=status,
        memory_category=category,
        speaker=speaker,
        enqueued_at=now if status == 'queued' else None,
        origin=origin,
    )


def evidence_text(content: str, origin: str | None) -> str:
    """What of a turn's content is evidence: the passages it is split into and the text extraction reads."""
    if origin == 'chat_reply':
        return ''
    return statements(content) if origin == 'chat' else content


def chunks_for(turn: CreateTurn, labels: list[str]) -> list[CreateChunk]:
    """A queued turn's chunks are embedded by the extraction worker, not by the request that stores them."""
    return [
        CreateChunk(
            id=chunk_id(turn.id, i),
            session_key=turn.session_key,
            turn_id=turn.id,
            position=i,
            text=text,
            scope_sets=turn.scope_sets,
            labels=labels,
            role=turn.role,
            created_at=turn.created_at,
            deferred=turn.extraction_status == 'queued',
        )
        for i, text in enumerate(passage_texts(turn.content, turn.origin))
    ]


def passage_texts(content: str, origin: str | None) -> list[str]:
    """The texts of a turn's passages, in order (none for a turn that is no evidence)."""
    if origin is None:
        return split_text(content)
    text = evidence_text(content, origin)
    return split_text(text) if text.strip() else []
