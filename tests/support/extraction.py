"""Turns queued for extraction, the facts it produced about the caller, and model replies for the LLM stage."""

from __future__ import annotations

from typing import Any

from tests.support.handlers import Api

EMPTY = {'entities': [], 'attributes': [], 'relations': [], 'actions': [], 'instructions': [], 'uncertainties': [], 'invalidations': []}


def reply(**parts: Any) -> dict[str, Any]:
    """A model's extraction reply: every part empty unless given."""
    return {**EMPTY, **parts}


def say(api: Api, text: str, **extra: Any) -> dict[str, Any]:
    """Write a turn for full extraction; it must be accepted as queued (202)."""
    code, body, _ = api.call('facts', 'POST', '/facts', {'text': text, **extra})
    assert code == 202 and body['status'] == 'queued', body
    return body


def self_facts(api: Api) -> dict[str, list[str]]:
    """The caller's own facts from /profile: key → values."""
    _, profile, _ = api.call('views', 'GET', '/profile')
    facts: dict[str, list[str]] = {}
    for entry in profile['selfFacts']:
        facts.setdefault(entry['key'], []).append(entry['value'])
    return facts
