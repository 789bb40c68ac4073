"""Per-context configuration (CONTRACT §13): defaults, deep merge and validation."""

from __future__ import annotations

import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_memory.errors import BadRequest

# Upper bounds keep every value usable as a duration or a counter (now ± the duration must stay a valid date,
# and the database's integers stop at 2^63); they are far above any sensible setting.
MAX_FRESHNESS_SECONDS = 365 * 24 * 3600
MAX_DAYS = 36_500
MAX_RATE = 1_000_000


class _Section(BaseModel):
    model_config = ConfigDict(extra='forbid', strict=True)


class ResponseCacheConfig(_Section):
    enabled: bool = True
    similarity_threshold: float = Field(default=0.92, gt=0.0, le=1.0)
    freshness_window_seconds: int = Field(default=3600, ge=0, le=MAX_FRESHNESS_SECONDS)


class TraceRetentionConfig(_Section):
    decision_trace_days: int | None = Field(default=None, ge=1, le=MAX_DAYS)
    retrieval_trace_days: int | None = Field(default=90, ge=1, le=MAX_DAYS)
    response_trace_days: int | None = Field(default=90, ge=1, le=MAX_DAYS)


class ReconciliationConfig(_Section):
    confidence_floor: float = Field(default=0.7, ge=0.0, le=1.0)


class LifecycleConfig(_Section):
    context_ttl_days: float = Field(default=7, gt=0, le=MAX_DAYS)


class RateLimitConfig(_Section):
    enabled: bool = True
    requests_per_minute: int = Field(default=1200, ge=1, le=MAX_RATE)
    burst: int = Field(default=200, ge=1, le=MAX_RATE)


class ModelsConfig(_Section):
    extraction: str | None = None
    synthesis: str | None = None
    embedding: str | None = None


class ContextConfig(_Section):
    response_cache: ResponseCacheConfig = ResponseCacheConfig()
    trace_retention: TraceRetentionConfig = TraceRetentionConfig()
    reconciliation: ReconciliationConfig = ReconciliationConfig()
    lifecycle: LifecycleConfig = LifecycleConfig()
    models: ModelsConfig = ModelsConfig()
    rate_limit: RateLimitConfig = RateLimitConfig()


def deep_merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def effective_config(stored: dict[str, Any] | None) -> ContextConfig:
    """Validate ``stored`` (a partial override) merged over the defaults; raise 400 on any bad field."""
    try:
        # JSON numbers: allow an int where a float is expected, nothing looser.
        return ContextConfig.model_validate(_ints_to_floats(deep_merge(ContextConfig().model_dump(), stored or {})))
    except ValidationError as exc:
        problems = '; '.join(f'{".".join(str(p) for p in e["loc"])}: {e["msg"]}' for e in exc.errors())
        raise BadRequest(f'invalid config: {problems}') from exc


_FLOAT_FIELDS = {('response_cache', 'similarity_threshold'), ('reconciliation', 'confidence_floor'), ('lifecycle', 'context_ttl_days')}


def _ints_to_floats(config: dict[str, Any]) -> dict[str, Any]:
    for section, field in _FLOAT_FIELDS:
        value = config.get(section, {}).get(field) if isinstance(config.get(section), dict) else None
        if isinstance(value, int) and not isinstance(value, bool):
            config[section][field] = float(value)
    return config
