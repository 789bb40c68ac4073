"""Reading a whole user turn: sentence by sentence, with sarcasm, questions, self-corrections and clarifications."""

from __future__ import annotations

import re
from dataclasses import replace

from agent_memory.extraction.model import ExtractedUncertainty
from agent_memory.extraction.stage0.claim import Claim
from agent_memory.extraction.stage0.reading import Finding, Reading, Turn, read_sentence
from agent_memory.extraction.stage0.signals import (
    CLARIFICATION,
    CORRECTION_SPLIT,
    CORRECTION_START,
    REACTION,
    is_compliment,
    is_question,
    sarcasm_marker,
)
from agent_memory.extraction.stage0.text import PROPER, body, clean_value, clip
from agent_memory.extraction.stage0.titles import is_job_title

TENTATIVE = 0.6
# "it's", "technically", "more like": what leads a bare corrected value; " plan" is the key restated, not the value.
_FRAGMENT_LEAD = re.compile(
    r"^(?:(?:it's|it is|that's|that is|technically|more like|more precisely|precisely|officially|strictly speaking|really)\s+)+",
    re.IGNORECASE,
)
_FRAGMENT_TIER = re.compile(r'\s+(?:plan|tier|subscription)$', re.IGNORECASE)
_MOVES = frozenset({'move', 'relocate'})
_INTO_THE_STATED = re.compile(r'^(?:(?:here|there|from)\b|$)', re.IGNORECASE)  # not "to Rome": a move elsewhere
_NAME_LIKE_KEYS = frozenset({'employer', 'location', 'hometown', 'name', 'preferred_name', 'current_location'})


def read_turn(sentences: list[str], turn: Turn) -> Reading:
    total = Reading()
    turn_marker = sarcasm_marker(turn.text) if re.search(r'(?:^|\s)/s\b', turn.text) else None
    previous: list[Finding] = []
    complimented = False
    for index, sentence in enumerate(sentences):
        if complimented and REACTION.match(sentence):
            previous = []
            continue  # "Wow, that's gorgeous! Where was it? I love the colours.": a reaction to what was shown
        complimented = complimented or is_compliment(sentence)
        marker = turn_marker or sarcasm_marker(sentence)
        if marker:
            total.uncertainties.append(_sarcasm(sentence, marker))
        if marker or is_question(sentence):
            previous = []
            continue
        text = body(sentence)
        clarifying = CLARIFICATION.match(text)
        text = text[clarifying.end() :] if clarifying else text
        reading = _read_with_corrections(text, previous, total, turn, opens_turn=index == 0)
        if clarifying and not reading.findings:
            reading.extend(_clarify_fragment(text, turn))
        total.extend(reading)
        previous = reading.findings
    return _dated_by_the_move(total)


def _dated_by_the_move(reading: Reading) -> Reading:
    """ "I live in Leeds now, moved up from London last month": the move told in its own clause dates the residence just
    stated (a state change is its new value, not also an event)."""
    move = next((h for h in reading.happenings if h.event.verb in _MOVES and h.occurred_at and _INTO_THE_STATED.match(h.event.object_text or '')), None)
    undated = [f for f in reading.findings if f.key == 'location' and f.valid_from is None and move and f.entity == move.actor]
    if move is None or len(undated) != 1:
        return reading
    reading.findings[reading.findings.index(undated[0])] = replace(undated[0], valid_from=move.occurred_at)
    reading.happenings.remove(move)
    return reading


def _read_with_corrections(text: str, previous: list[Finding], total: Reading, turn: Turn, opens_turn: bool) -> Reading:
    """ "I'm CEO — well, co-CEO" inside a sentence, or "I'm CEO. Well, co-CEO." across two."""
    split = CORRECTION_SPLIT.search(text)
    if split and split.start() > 0 and text[split.end() :].strip():
        head = read_sentence(text[: split.start()], turn)
        head.extend(_correct(head, head.findings, text[split.end() :], turn, said=text[: split.start()]))
        return head
    start = CORRECTION_START.match(text)
    if start and previous and text[start.end() :].strip():
        return _correct(total, previous, text[start.end() :], turn)
    return read_sentence(text, turn, opens_turn)


def _correct(base: Reading, targets: list[Finding], tail: str, turn: Turn, said: str = '') -> Reading:
    """Replace a value just stated by its correction; the corrected value is tentative and the wavering is recorded.
    ``said`` is the claim before the correction when it is in the same sentence."""
    targets = list(targets)
    reading = read_sentence(tail, turn)
    if not targets:
        return reading
    for new in list(reading.findings):
        old = next((t for t in targets if (t.entity, t.key) == (new.entity, new.key) and _same(t.value, new.value) is False), None)
        if old is not None:
            _retract(base, old)
            reading.findings.remove(new)
            reading.findings.append(_tentative(new))
            reading.uncertainties.append(_self_correction(old, new.value))
    if reading.findings or reading.happenings or reading.invalidations:
        return reading
    target = targets[-1]
    value = fragment_value(tail, target.key)
    if value is None or _same(value, target.value):
        return reading
    _retract(base, target)
    corrected = _restated(said, target, value, tail, turn) or replace(target, value=value)
    return Reading(findings=[_tentative(corrected)], uncertainties=[_self_correction(target, value)])


def _restated(said: str, target: Finding, value: str, tail: str, turn: Turn) -> Finding | None:
    """ "I moved to Munich - sorry, Hamburg - in January": the claim said again with the corrected value and what follows
    the correction ("I moved to Hamburg in January"), so the correction keeps the claim's date."""
    rest = tail[tail.find(value) + len(value) :].strip(' ,;:—–-)') if value in tail else ''
    if not rest or target.value not in said:
        return None
    again = read_sentence(f'{said.replace(target.value, value, 1)} {rest}', turn)
    return next((f for f in again.findings if (f.entity, f.key) == (target.entity, target.key) and _same(f.value, value)), None)


def _clarify_fragment(text: str, turn: Turn) -> Reading:
    """ "For the record: Cascais." answers the one open uncertainty that names an entity and key."""
    open_ = [u for u in turn.ctx.open_uncertainties if u.entity is not None and u.key]
    if len(open_) != 1:
        return Reading()
    entity, key = open_[0].entity, str(open_[0].key)
    value = fragment_value(text, key)
    if entity is None or value is None:
        return Reading()
    return Reading(findings=[Finding(entity=entity, key=key, value=value, category=Claim(key, value).category(entity.type))])


def fragment_value(text: str, key: str) -> str | None:
    """A bare phrase standing for a value of ``key`` ("co-CEO", "Cascais"), or None if it does not look like one."""
    value = _FRAGMENT_TIER.sub('', _FRAGMENT_LEAD.sub('', clean_value(_FRAGMENT_LEAD.sub('', text.strip()))))
    if not value or len(value.split()) > 6:
        return None
    if key in _NAME_LIKE_KEYS:
        m = re.fullmatch(PROPER, value)
        return value if m else None
    if key == 'title':
        return value if is_job_title(value) else None
    return value if not re.match(r"^(?:i|i'm|we|my|it|this|that|he|she|they)\b", value, re.IGNORECASE) else None


def _same(a: str, b: str) -> bool:
    return a.casefold().strip() == b.casefold().strip()


def _retract(reading: Reading, finding: Finding) -> None:
    if finding in reading.findings:
        reading.findings.remove(finding)


def _tentative(finding: Finding) -> Finding:
    return replace(finding, tentative=True, confidence=TENTATIVE)


def _self_correction(old: Finding, new_value: str) -> ExtractedUncertainty:
    who = 'the speaker' if old.entity.is_self else old.entity.name
    return ExtractedUncertainty(
        about=clip(f"{old.key} of {who}: '{old.value}' or '{new_value}'", 512),
        reason=clip(
            f"the speaker corrected '{old.value}' to '{new_value}' in the same turn; the corrected value is kept as tentative", 1024
        ),
        kind='self_correction',
        entity=old.entity,
        key=old.key,
    )


def _sarcasm(sentence: str, marker: str) -> ExtractedUncertainty:
    return ExtractedUncertainty(
        about=f'sarcastic remark: "{clip(sentence, 300)}"',
        reason=clip(f"sarcasm marker '{marker}': taken as not meant literally, so no fact or preference was recorded", 1024),
        kind='sarcasm',
    )
