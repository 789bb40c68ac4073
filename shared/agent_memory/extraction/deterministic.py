"""Stage 0: the deterministic extractor (CONTRACT §6.2). Pure, rule-based, and honest about what it could not pin down.

``extract(text, ctx)`` always runs first and is the whole extractor when no model is configured. It reads:

* user and system turns for behavioural instructions (assistant and tool text is untrusted and never yields any);
* user turns for first-person facts (identity, preferences, plans, key-value statements, current context), explicit
  negations, facts about entities the vocabulary knows, past and scheduled events — with relative dates resolved
  against ``ctx.observed_at`` — and for what it cannot settle: self-corrections, ambiguous references, unresolvable
  times and sarcasm become uncertainties instead of guessed facts.

Questions, hypotheticals and reported speech yield nothing; an assistant's "I" is not the caller, so assistant and
tool turns yield nothing at all.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TypeVar

from agent_memory.extraction.model import (
    EntityRef,
    ExtractedAction,
    ExtractedAttribute,
    ExtractedInstruction,
    ExtractedRelation,
    Extraction,
    ExtractionContext,
)
from agent_memory.extraction.stage0.casual import capitalise_names, is_caseless, repair_cue_words
from agent_memory.extraction.stage0.dates import at_midnight
from agent_memory.extraction.stage0.instructions import find_instruction
from agent_memory.extraction.stage0.reading import Finding, Happening, Reading, Turn
from agent_memory.extraction.stage0.sentences import split_sentences
from agent_memory.extraction.stage0.text import normalise_text, without_texting_fillers
from agent_memory.extraction.stage0.turn import read_turn

UNTRUSTED_ROLES = frozenset({'assistant', 'tool'})
_ARTEFACT_REQUEST = re.compile(
    r'\b(?:write|draft|compose|summari[sz]e|translate|rewrite|create|prepare|generate|make)\b.{0,40}\b(?:me|an?|the|this|my)\b', re.I
)
T = TypeVar('T')
MAX_TURN_CHARS = 20_000  # rules are linear, but a pasted document is not a conversational turn
MAX_SENTENCES = 200  # a conversational turn has far fewer; bounds the worst case (the rest stays searchable as chunks)


def extract(text: str, ctx: ExtractionContext) -> Extraction:
    if ctx.role in UNTRUSTED_ROLES or not text.strip():
        return Extraction()
    raw = _without_speaker_label(text[:MAX_TURN_CHARS], ctx)
    caseless = is_caseless(raw)
    clean = capitalise_names(normalise_text(raw), caseless=caseless)
    sentences = split_sentences(clean, caseless=caseless)[:MAX_SENTENCES]
    repaired = [repair_cue_words(s) for s in sentences]
    after_request = _asked_for_artefact(ctx)
    among_people = ctx.speaker is not None  # a named speaker: people talking to each other, not to the assistant
    instructions = [
        i
        for s, r in zip(sentences, repaired, strict=True)
        if (i := find_instruction(r, after_request, spoken=s, among_people=among_people))
    ]
    said = [without_texting_fillers(r) for r in repaired]
    reading = read_turn(said, Turn(repair_cue_words(clean), ctx)) if ctx.role == 'user' else Reading()
    return _assemble(reading, instructions, ctx.observed_at)


_LABEL = re.compile(r'^\s*(?P<name>[^:\n]{1,80}):\s+')


def _without_speaker_label(text: str, ctx: ExtractionContext) -> str:
    """ "Melanie: Painting landscapes is my favorite!" sent as Melanie's message: the transcript's label is not said."""
    m = _LABEL.match(text)
    names = {n.casefold() for n in (ctx.speaker, ctx.speaker_name) if n}
    return text[m.end() :] if m and m.group('name').strip().casefold() in names else text


def _asked_for_artefact(ctx: ExtractionContext) -> bool:
    """Whether the speaker's previous turn asked for something to be produced (so "keep it short" is about that)."""
    previous = next((t for t in reversed(ctx.recent_turns) if t.role == ctx.role), None)
    return bool(previous and _ARTEFACT_REQUEST.search(previous.content))


def _assemble(reading: Reading, instructions: list[ExtractedInstruction], observed_at: dt.datetime) -> Extraction:
    attributes = [_attribute(f, observed_at) for f in reading.findings]
    relations = [*(r for f in reading.findings if (r := _relation(f))), *reading.links]
    actions = [_action(h, observed_at) for h in reading.happenings]
    entities = [
        *(a.entity for a in attributes),
        *(r.object for r in relations),
        *(a.actor for a in actions),
        *(v.entity for v in reading.invalidations),
    ]
    return Extraction(
        entities=_unique(entities),
        attributes=_unique(attributes),
        relations=_unique(relations),
        actions=_unique(actions),
        instructions=_unique(instructions),
        uncertainties=_unique(reading.uncertainties),
        invalidations=_unique(reading.invalidations),
        revisions=_unique(reading.revisions),
    )


def _attribute(f: Finding, observed_at: dt.datetime) -> ExtractedAttribute:
    return ExtractedAttribute(
        entity=f.entity,
        key=f.key,
        value=f.value[:4096],
        category=f.category,
        confidence=f.confidence,
        valid_from=at_midnight(f.valid_from, observed_at) if f.valid_from else None,
        valid_until=at_midnight(f.valid_until, observed_at) if f.valid_until else None,
        tentative=f.tentative,
    )


def _relation(f: Finding) -> ExtractedRelation | None:
    """Employer and residence are also graph edges; a tentative value is not drawn until it is settled."""
    if f.tentative or f.key not in ('employer', 'location'):
        return None
    if f.key == 'employer':
        label, target = 'works_at', EntityRef(type='organisation', name=f.value)
    else:
        label, target = ('lives_in' if f.entity.type == 'person' else 'located_in'), EntityRef(type='location', name=f.value)
    return ExtractedRelation(subject=f.entity, label=label, object=target, category=f.category, confidence=f.confidence)


def _action(h: Happening, observed_at: dt.datetime) -> ExtractedAction:
    return ExtractedAction(
        actor=h.actor,
        verb=h.event.verb,
        object_text=h.event.object_text,
        summary=h.summary,
        occurred_at=at_midnight(h.occurred_at, observed_at) if h.occurred_at else None,
    )


def _unique(items: list[T]) -> tuple[T, ...]:
    return tuple(dict.fromkeys(items))
