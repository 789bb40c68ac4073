"""The markdown block /context returns for a system prompt (CONTRACT §7.1). No LLM involved."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

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
    passages = [h for h in hits if h.source == 'memory_chunk']
    writers = {p for p in [*(h.principal for h in passages), *(t.principal for t in transcript)] if p and p != caller.principal_id}
    # the instructions, the self facts and the names of whoever spoke, in one round trip (no memory category asked)
    rows = reads.profile((key_type, key_name), (), caller.patterns('memory:read'), now, PROMPT_LIMIT, sorted(writers))
    speakers = Speakers(caller.principal_id, rows.self_name or caller.display_name, rows.principal_names)
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
    if passages:
        lines = [f'- ({_day(h.occurred_at)}, {speakers.of(h.speaker, h.principal, h.role)}) {h.text}' for h in passages]
        sections.append('## Passages\n' + '\n'.join(lines))
    if transcript:
        lines = [f'- {speakers.of(t.speaker, t.principal, t.role)}: {t.content}' for t in transcript]
        sections.append('## Recent conversation\n' + '\n'.join(lines))
    if not sections:
        return '## Memory\nNothing relevant is stored yet.'
    return '\n\n'.join(sections)


@dataclass(frozen=True)
class Speakers:
    """Who said a passage (CONTRACT §6.2): the message's name, else the name of the principal that wrote it (the
    caller's own turns: the name the caller gave, else its display name), else the role. An assistant's or a tool's
    turn without a name is the role's: the principal only sent it."""

    caller: str
    caller_name: str
    names: dict[str, str]

    def of(self, speaker: str | None, principal: str | None, role: str | None) -> str:
        if speaker:
            return speaker
        if role not in (None, 'user'):
            return str(role)
        if principal == self.caller:
            return self.caller_name
        return self.names.get(principal or '') or role or 'user'
