"""The transcript window /chat and session context read: the session's last turns, newest content first kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agent_memory.db.memory_store import MemoryStore
from agent_memory.db.turn_store import TurnStore
from agent_memory.rows.conversation import TurnRow

WINDOW_TURNS = 10
WINDOW_CHARS = 8000


def window(store: MemoryStore, session_id: str, patterns: Sequence[str]) -> list[TurnRow]:
    """Up to 10 user/assistant turns the reader (``patterns``) may see, at most 8,000 characters of the newest content,
    oldest first."""
    recent = TurnStore(store).recent_turns(session_id, 1 << 62, WINDOW_TURNS * 2, patterns)
    said = [t for t in recent if t.role in ('user', 'assistant')]
    kept: list[TurnRow] = []
    budget = WINDOW_CHARS
    for turn in reversed(said[-WINDOW_TURNS:]):
        if budget <= 0:
            break
        content = turn.content[-budget:] if len(turn.content) > budget else turn.content
        budget -= len(content)
        kept.append(replace(turn, content=content))
    return list(reversed(kept))


def has_turns(store: MemoryStore, session_id: str) -> bool:
    """Any turn at all (system and tool turns count: the conversation is under way)."""
    return TurnStore(store).session_has_turns(session_id)
