"""One attribute a clause states, and the category its key puts it in (keys: ``tests/extraction_corpus/README.md``)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent_memory.extraction.stage0.lexicon import word_set

IDENTITY_KEYS = word_set(
    'name preferred_name title occupation employer location hometown language native_language nationality pronouns birthday age email '
    'phone timezone likes dislikes preference diet allergy plays'
)
CONTEXT_KEYS = frozenset({'current_location', 'working_on', 'working_from', 'status', 'reading', 'volunteering'})
# What was just named elsewhere: a value holding one of these has its referent in another sentence.
PRONOUN_OBJECT = re.compile(r'^(?:it|this|that|these|those|them|you|him|her|us|me|when|how|what|the idea)\b', re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    key: str
    value: str
    change: bool = False  # stated as a change ("moved to", "joined"): a date on the clause becomes valid_from

    def category(self, entity_type: str) -> str:
        if self.key in CONTEXT_KEYS:
            return 'knowledge' if self.key == 'status' and entity_type != 'person' else 'context'
        return 'identity' if self.key in IDENTITY_KEYS else 'knowledge'


def match(pattern: str, text: str) -> re.Match[str] | None:
    return re.match(pattern, text, re.IGNORECASE)
