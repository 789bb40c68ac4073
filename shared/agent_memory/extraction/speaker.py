"""Binding first person to a named speaker: every ``EntityRef.me()`` in an extraction becomes ``person/<name>``.

Extractors always read first person as the speaker's self (stage 0's rules and the LLM prompt both do); the pipeline
rebinds afterwards, so one rule serves every extractor and a speaker's facts never merge into the caller's self.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from agent_memory.extraction.model import EntityRef, Extraction


def bind_first_person(extraction: Extraction, speaker: str | None) -> Extraction:
    if not speaker:
        return extraction
    bound = _rebind(extraction, EntityRef(type='person', name=speaker))
    assert isinstance(bound, Extraction)
    return bound


def _rebind(value: Any, person: EntityRef) -> Any:
    if isinstance(value, EntityRef):
        return person if value.is_self else value
    if isinstance(value, tuple):
        return tuple(dict.fromkeys(_rebind(item, person) for item in value))
    if isinstance(value, BaseModel):
        changes = {name: _rebind(getattr(value, name), person) for name in type(value).model_fields}
        return value.model_copy(update=changes)
    return value
