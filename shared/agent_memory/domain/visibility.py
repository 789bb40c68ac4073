"""The caller's readable region for one request: lens narrowing and the visibility fingerprint (CONTRACT §3, §8)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import replace

from agent_memory.domain.auth import Caller
from agent_memory.domain.scopes import narrow_to_lens, normalise_pattern


def parse_lens(raw: str | None) -> list[str] | None:
    """``?lens=a/b/*,c`` on GET reads; ``None`` means no lens."""
    if raw is None or not raw.strip():
        return None
    return [normalise_pattern(p) for p in raw.split(',') if p.strip()]


def with_lens(caller: Caller, lens: Sequence[str] | None) -> Caller:
    """The same caller whose ``memory:read`` is narrowed to the lens (never widened)."""
    if lens is None:
        return caller
    return replace(caller, grants={**caller.grants, 'memory:read': narrow_to_lens(caller.patterns('memory:read'), lens)})


def fingerprint(caller: Caller, lens: Sequence[str] | None = None, labels: Sequence[str] | None = None) -> str:
    """A stable hash of what this request can read; cached answers are shared only between equal fingerprints."""
    region = sorted(set(narrow_to_lens(caller.patterns('memory:read'), lens)))
    payload = {'context': caller.context_id, 'read': region, 'labels': sorted(set(labels or []))}
    return hashlib.sha256(json.dumps(payload, sort_keys=True, separators=(',', ':')).encode()).hexdigest()


def personal_fingerprint(shared: str, principal_id: str) -> str:
    """The fingerprint of an answer only its principal may be served: one built on the caller's self entity (§8)."""
    return hashlib.sha256(f'{shared}|principal:{principal_id}'.encode()).hexdigest()
