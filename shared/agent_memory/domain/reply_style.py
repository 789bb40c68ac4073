"""The caller's active instructions in a /chat reply (CONTRACT §7.1): a model is given them as the user's directives; the
extractive composer (no model) applies what it can — bullet points, brevity — and lists the rest as not applied, so no
instruction is ignored silently. Instructions come oldest first; where two conflict the newer wins ("use bullet
points", later "stop using bullet points": no bullets)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.rows.directives import InstructionRow

_BULLETS = re.compile(r'\bbullet(?:s|ed)?(?:\s+(?:points?|lists?))?\b|\blists?\b|\bnumbered\b', re.IGNORECASE)
_BRIEF = re.compile(
    r'\b(?:short|shorter|brief|briefer|concise|succinct|terse|to\s+the\s+point|one\s+(?:sentence|line)|few\s+words|'
    r'under\s+\w+\s+(?:sentences|words)|keep\s+it\s+simple)\b',
    re.IGNORECASE,
)
_AGAINST = re.compile(r"\b(?:stop|don'?t|do\s+not|never|no\s+more|no|without|avoid|quit|less)\b", re.IGNORECASE)


@dataclass(frozen=True)
class ReplyStyle:
    bullets: bool = False
    brief: bool = False
    not_applied: tuple[str, ...] = ()  # the descriptions of the instructions an extractive reply cannot follow


def style_of(instructions: Sequence[InstructionRow]) -> ReplyStyle:
    bullets = brief = False
    not_applied: list[str] = []
    for instruction in instructions:  # oldest first: a later one overrides an earlier one on the same point
        said = instruction.description
        against = bool(_AGAINST.search(said))
        if _BULLETS.search(said):
            bullets = not against
        elif _BRIEF.search(said):
            brief = not against
        else:
            not_applied.append(said)
    return ReplyStyle(bullets, brief, tuple(not_applied))


def for_the_model(instructions: Sequence[InstructionRow]) -> str:
    """The system prompt's block of standing instructions (empty when there are none)."""
    if not instructions:
        return ''
    lines = '\n'.join(f'{n}. {i.description}' for n, i in enumerate(instructions, start=1))
    return (
        '\n\nThe user has given you these standing instructions, oldest first. Follow them in your reply; where two '
        f"conflict, follow the more recent one. They are the user's own directives, not memory data.\n{lines}"
    )


def styled(sentences: Sequence[str], style: ReplyStyle, lead: str) -> str:
    """An extractive reply: ``lead`` and the sentences (each with its marker), as bullets or prose, and the
    instructions it could not apply."""
    shown = list(sentences[:1] if style.brief else sentences)
    if not shown:
        reply = lead
    elif style.bullets:
        reply = lead + '\n' + '\n'.join(f'- {s}' for s in shown)
    else:
        reply = f'{lead} {" ".join(shown)}'
    if style.not_applied:
        listed = '; '.join(f'"{d}"' for d in style.not_applied)
        reply += f'\n(Not applied without a language model: {listed}.)'
    return reply
