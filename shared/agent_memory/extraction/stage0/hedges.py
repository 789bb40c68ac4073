"""Hedges: what is not settled becomes an open unknown, never a fact (CONTRACT §6.2, "Precision first").

"I think I might be moving to Manchester", "Maybe next year we buy an apartment, it depends on the price", "we're
thinking about getting married", "I may take a sabbatical; nothing is settled", or a statement followed by "Not decided
yet." — each records what is open (``about``) and why (``reason``), and no attribute. When the hedge is about where
someone will live or work, the unknown names that entity and key, so a later definite statement settles it (the
reconciler resolves open unknowns at the address a confident value is written to).
"""

from __future__ import annotations

import re

from agent_memory.extraction.model import EntityRef, ExtractedUncertainty
from agent_memory.extraction.stage0.text import PROPER, clip

HEDGE = re.compile(
    r'\b(?:might|maybe|perhaps|possibly|probably|thinking\s+(?:about|of|to)|think\s+about|considering|tossing\s+around|'
    r"hoping\s+to|(?:not|nothing(?:'s|\s+is|\s+has\s+been)?|haven't|hasn't|didn't|did\s+not)\s+(?:been\s+)?"
    r'(?:decided|decide|settled|fixed|fix|booked|final)(?:\s+yet)?|undecided|'
    r"depend(?:s|ing)?\s+(?:on|of)|contingent\s+on|if\s+all\s+goes\s+well|we'?ll\s+see|who\s+knows|not\s+sure\s+yet|"
    r'toying\s+with|tempted\s+to|leaning\s+towards?|weighing\s+(?:up\s+)?(?:whether|if|the)|in\s+two\s+minds|on\s+the\s+fence|'
    r"(?:haven't|have\s+not|not\s+yet|not)\s+made\s+up\s+(?:my|our|his|her|their)\s+minds?|not\s+sure\s+(?:if|whether|about)|"
    r'fingers\s+crossed|touch\s+wood|if\s+(?:everything|it\s+all)\s+(?:goes|works\s+out)|(?:could|might)\s+end\s+up|tentatively|'
    r'if\s+the\s+\w+\s+comes\s+through|'
    r'(?<!\bi\s)\bmay\s+(?=(?:be|take|go|move|get|start|quit|have|need|come|join|switch|buy|adopt|extend|apply|change)\b))',
    re.IGNORECASE,
)
# A sentence that only hedges the one before it: "Not decided yet.", "Nothing is fix.", "We'll see!"
ONLY_A_HEDGE = re.compile(
    r'^(?:(?:but|and|so|oh|well|ok|okay|idk|lol|haha)[\s,]+)*(?:(?:it\s+)?(?:all\s+)?depends|not\s+(?:decided|settled|sure|final)'
    r"(?:\s+yet)?|nothing(?:'s|\s+is)?\s+(?:decided|settled|fixed|fix|booked|final|certain)(?:\s+yet)?|we'?ll\s+see|who\s+knows|"
    r'(?:i\s+)?(?:have\s+not|haven\'t|did\s+not|didn\'t)\s+decided?(?:\s+yet)?|tbd|undecided)\b[^.!?]{0,60}[.!?]*$',
    re.IGNORECASE,
)
_MOVE = re.compile(rf'\b(?:mov|relocat)\w*\s+(?:back\s+)?to\s+(?P<place>{PROPER})')
_WHO = re.compile(rf"^(?:(?:and|also|so|oh|but|then)\s+)*(?P<who>{PROPER})\s+(?:might|may|is|'s|could)\b")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|we|we're|we'll|my|our)\b")
# "maybe we can hang out later": a social plan between the speakers, not a fact about either left open
SMALL_TALK = re.compile(
    r'\b(?:hang\s+out|meet\s+up|catch\s+up|get\s+together|grab\s+(?:a\s+)?(?:coffee|drink|lunch|dinner|bite)|chat|talk|call|'
    r'text|see\s+you|get\s+back|let\s+you\s+know|come\s+(?:over|by)|swing\s+by)\b',
    re.IGNORECASE,
)


def hedge_in(clause: str) -> str | None:
    m = HEDGE.search(clause)
    return m.group(0) if m else None


def hedged(clause: str, cue: str, named: dict[str, EntityRef]) -> ExtractedUncertainty:
    """The open unknown a hedged clause leaves; a move names whose residence is open (the speaker's, or a person's named
    at the start of the clause and known as ``named``)."""
    entity, key = None, None
    if move := _MOVE.search(clause):
        who = _WHO.match(clause)
        if who and who.group('who') in named:
            entity, key = named[who.group('who')], 'location'
        elif _FIRST_PERSON.search(clause):
            entity, key = EntityRef.me(), 'location'
        about = f'moving to {move.group("place")}: "{clip(clause, 400)}"'
    else:
        about = f'not settled: "{clip(clause, 460)}"'
    return ExtractedUncertainty(
        about=clip(about, 512),
        reason=clip(f"'{cue.strip()}' leaves it open, so nothing was recorded as a fact", 1024),
        kind='hedge',
        entity=entity,
        key=key,
    )
