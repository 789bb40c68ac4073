"""Reading a whole user turn: sentence by sentence, with sarcasm, questions, self-corrections and clarifications."""

from __future__ import annotations

import re
from dataclasses import replace

from agent_memory.extraction.model import ExtractedUncertainty, Revision
from agent_memory.extraction.stage0.answers import answer_to_open_question, fragment_value
from agent_memory.extraction.stage0.hedges import ONLY_A_HEDGE, hedged
from agent_memory.extraction.stage0.reading import Finding, Reading, Turn, read_sentence
from agent_memory.extraction.stage0.retractions import without_lead
from agent_memory.extraction.stage0.signals import (
    CLARIFICATION,
    CORRECTION_AFTER,
    CORRECTION_SPLIT,
    CORRECTION_START,
    LONGEST_CORRECTION_AFTER,
    REACTION,
    is_compliment,
    is_question,
    sarcasm_marker,
)
from agent_memory.extraction.stage0.text import PROPER, body, clip

TENTATIVE = 0.6
_MULTI_VALUED = frozenset({'likes', 'dislikes', 'preference', 'plays'})  # a second value adds to the first
_MOVES = frozenset({'move', 'relocate'})
_FROM_PLACE = re.compile(rf'(?:^|\s)from\s+(?:(?:a|the)\s+[a-z]+\s+(?:near|outside|in)\s+)?(?P<place>{PROPER})')
_INTO_THE_STATED = re.compile(r'^(?:(?:here|there|from)\b|$)', re.IGNORECASE)  # not "to Rome": a move elsewhere


def read_turn(sentences: list[str], turn: Turn) -> Reading:
    total = Reading()
    turn_marker = sarcasm_marker(turn.text) if re.search(r'(?:^|\s)/s\b', turn.text) else None
    previous: list[Finding] = []
    last = Reading()  # what the sentence before yielded
    complimented = False
    for index, sentence in enumerate(sentences):
        if complimented and REACTION.match(sentence):
            previous, last = [], Reading()
            continue  # "Wow, that's gorgeous! Where was it? I love the colours.": a reaction to what was shown
        complimented = complimented or is_compliment(sentence)
        marker = turn_marker or sarcasm_marker(sentence)
        if marker:
            total.uncertainties.append(_sarcasm(sentence, marker))
        if marker or is_question(sentence):
            previous, last = [], Reading()
            continue
        text, _ = without_lead(body(sentence))
        if not text.strip():
            continue
        if (last.findings or last.happenings) and ONLY_A_HEDGE.match(text):  # "I'm moving to Leeds. Not decided yet."
            _hedge_back(total, last, sentences[index - 1], text)
            previous, last = [], Reading()
            continue
        if fuller := _fuller_name(last, text):  # "name's Tomasz. Tomasz Wrona."
            total.findings[total.findings.index(fuller[0])] = fuller[1]
            continue
        clarifying = CLARIFICATION.match(text)
        text = text[clarifying.end() :] if clarifying else text
        reading = _read_with_corrections(text, previous, total, turn, opens_turn=index == 0)
        if not reading.findings:
            reading.extend(answer_to_open_question(text, turn.ctx, clarifying=bool(clarifying)))
        total.extend(reading)
        previous, last = reading.findings, reading
    total.revisions = _settled(total.revisions)
    return _moved_from(total)


def _settled(revisions: list[Revision]) -> list[Revision]:
    """A value given up and then replaced later in the turn is one revision, the replacing one."""
    replaced = {(r.entity, r.old) for r in revisions if r.new is not None}
    return [r for r in revisions if r.new is not None or (r.entity, r.old) not in replaced]


def _fuller_name(last: Reading, text: str) -> tuple[Finding, Finding] | None:
    """A bare name right after the speaker gave part of it: the name given, and the fuller one that replaces it."""
    given = next((f for f in last.findings if f.key == 'name' and f.entity.is_self), None)
    if given is None or not re.fullmatch(PROPER, text) or not text.startswith(given.value + ' '):
        return None
    return given, replace(given, value=text)


def _hedge_back(total: Reading, last: Reading, said: str, hedge: str) -> None:
    """Turn what the sentence before said into one open unknown: a following "not decided yet" hedges it."""
    for finding in last.findings:
        _retract(total, finding)
    total.happenings = [h for h in total.happenings if h not in last.happenings]
    named = {f.entity.name: f.entity for f in last.findings}
    total.uncertainties.append(hedged(body(said), hedge, named))


def _moved_from(reading: Reading) -> Reading:
    """ "we relocated here last spring from Bellmont": where someone moved from is a fact about them (``moved_from``);
    the move itself still dates the residence said beside it (``_dated_by_the_move``), and is no event besides."""
    origins = []
    for happening in reading.happenings:
        if happening.event.verb in _MOVES | {'come', 'emigrate'} and (m := _FROM_PLACE.search(happening.event.object_text or '')):
            origins.append((happening, Finding(happening.actor, 'moved_from', m.group('place'), 'identity')))
    reading = _dated_by_the_move(reading)
    for happening, finding in origins:
        if happening in reading.happenings:
            reading.happenings.remove(happening)
        reading.findings.append(finding)
    return reading


def _dated_by_the_move(reading: Reading) -> Reading:
    """ "I live in Leeds now, moved up from London last month": the move told in its own clause dates the residence just
    stated (a state change is its new value, not also an event)."""
    moves = (h for h in reading.happenings if h.event.verb in _MOVES and h.occurred_at)
    move = next((h for h in moves if _INTO_THE_STATED.match(h.event.object_text or '')), None)
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
    after = CORRECTION_AFTER.search(text, max(0, len(text) - LONGEST_CORRECTION_AFTER))
    if after and after.start() > 0:
        head = read_sentence(text[: after.start()], turn, opens_turn)
        single = [f for f in head.findings if f.key not in _MULTI_VALUED]  # "I love jazz, blues actually" adds a value
        head.extend(_correct(head, single, after.group('value'), turn) if single else Reading())
        return head
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
    # The value the fragment can stand for, latest claim first ("at Fintrack as an analyst — sorry, at Finlytics").
    fitting = ((t, fragment_value(tail, t.key)) for t in reversed(targets) if t.key not in _MULTI_VALUED)
    target, value = next(((t, v) for t, v in fitting if v is not None and not _same(v, t.value)), (None, None))
    if target is None or value is None:
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
