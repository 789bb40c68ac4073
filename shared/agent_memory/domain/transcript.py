"""The transcript window /chat and session context read: the session's last turns, newest content first kept."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agent_memory.domain.ports import MemoryWrites
from agent_memory.rows.conversation import TurnRow
from agent_memory.tuning import knobs


def window(store: MemoryWrites, session_id: str, patterns: Sequence[str]) -> list[TurnRow]:
    """Up to ``window_turns`` user/assistant turns the reader (``patterns``) may see, at most ``window_chars`` of the
    newest content, oldest first."""
    tuned = knobs()
    recent = store.turns().recent_turns(session_id, 1 << 62, tuned.window_turns * 2, patterns)
    said = [t for t in recent if t.role in ('user', 'assistant')]
    kept: list[TurnRow] = []
    budget = tuned.window_chars
    for turn in reversed(said[-tuned.window_turns :]):
        if budget <= 0:
            break
        content = turn.content[-budget:] if len(turn.content) > budget else turn.content
        budget -= len(content)
        kept.append(replace(turn, content=content))
    return list(reversed(kept))


def has_turns(store: MemoryWrites, session_id: str) -> bool:
    """Any turn at all (system and tool turns count: the conversation is under way)."""
    return store.turns().session_has_turns(session_id)
