"""The response trace of a synthesised answer (/chat, /reflect): one builder, so both record the same shape."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

from agent_memory.domain.auth import Caller
from agent_memory.domain.synthesis import Composition
from agent_memory.write_ops import ResponseTrace


def response_trace(
    response_id: str,
    endpoint: str,
    caller: Caller,
    message: str,
    composition: Composition,
    citations: Sequence[Mapping[str, Any]],
    *,
    fingerprint: str,
    latency_ms: float,
    now: dt.datetime,
    cache_eligible: bool = False,
    reused_from: str | None = None,
    session_key: str | None = None,
) -> ResponseTrace:
    """``citations`` as stored (the wire form plus what cache validity needs); ``reused_from`` the answer a cache hit
    repeated. What the answer was built from is recorded too (CONTRACT §8)."""
    return ResponseTrace(
        id=response_id,
        endpoint=endpoint,
        message=message,
        reply=composition.reply,
        model=composition.model,
        tokens=composition.tokens,
        latency_ms=latency_ms,
        cached=reused_from is not None,
        cache_eligible=cache_eligible,
        cited=citations,
        visibility_fingerprint=fingerprint,
        principal=caller.principal_id,
        created_at=now,
        read_sources=[{'table': hit.table, 'key': hit.key} for hit in composition.read_sources],
        cited_entity_refs=sorted({ref for hit in composition.built_from for ref in hit.entity_refs}),
        reused_from=reused_from,
        session_key=session_key,
        read_region=sorted(set(caller.patterns('memory:read'))),
        acting_principal=caller.acting_principal_id,
    )
