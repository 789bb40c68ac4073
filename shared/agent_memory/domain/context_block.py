"""The markdown block /context returns for a system prompt (CONTRACT §7.1). No LLM involved."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from agent_memory.domain.auth import Caller
from agent_memory.domain.entity_keys import Speaker
from agent_memory.domain.ports import MemoryReads
from agent_memory.domain.retrieval import FACT_SOURCES, Hit
from agent_memory.rows.conversation import TurnRow

PROMPT_LIMIT = 20  # instructions, and self facts


def _day(value: dt.datetime | None) -> str:
    return value.date().isoformat() if value else 'undated'


def render_context(reads: MemoryReads, caller: Caller, hits: Sequence[Hit], now: dt.datetime, transcript: Sequence[TurnRow] = ()) -> str:
    sections: list[str] = []
    key_type, key_name = Speaker(caller.principal_id, caller.display_name).key
    # the instructions and the self facts in one round trip (no memory category asked)
    rows = reads.profile((key_type, key_name), (), caller.patterns('memory:read'), now, PROMPT_LIMIT)
    if rows.instructions:
        lines = [f'- {r.label}: {r.description}' for r in rows.instructions]
        sections.append('## Instructions\n' + '\n'.join(lines))
    profile = rows.self_attributes
    if profile:
        lines = [f'- {r.key.replace("_", " ")}: {r.value}' + (' (tentative)' if r.tentative else '') for r in profile]
        sections.append('## Profile\n' + '\n'.join(lines))
    facts = [h for h in hits if h.source in FACT_SOURCES]
    if facts:
        sections.append('## Relevant facts\n' + '\n'.join(f'- {h.text} (recorded {_day(h.occurred_at)})' for h in facts))
    passages = [h for h in hits if h.source == 'memory_chunk']
    if passages:
        lines = [f'- ({_day(h.occurred_at)}, {h.role or "user"}) {h.text}' for h in passages]
        sections.append('## Passages\n' + '\n'.join(lines))
    if transcript:
        lines = [f'- {t.role}: {t.content}' for t in transcript]
        sections.append('## Recent conversation\n' + '\n'.join(lines))
    if not sections:
        return '## Memory\nNothing relevant is stored yet.'
    return '\n\n'.join(sections)
