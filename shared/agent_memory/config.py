"""Process configuration, read once from ``AGENT_MEMORY_*`` environment variables."""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from agent_memory.extraction.structured_output import Setting, parse_setting

DEFAULT_DATA_DIR = '.data'
EMBEDDING_PROVIDERS = ('local', 'openai')
DB_USER_LEVELS = ('root', 'namespace')  # where AGENT_MEMORY_DB_USER is defined: DEFINE USER … ON ROOT | ON NAMESPACE


@dataclass(frozen=True)
class Settings:
    db_url: str
    db_namespace: str
    db_user: str | None
    db_password: str | None
    db_timeout_seconds: float
    key_secret: str
    management_key: str | None
    management_keys_previous: tuple[str, ...]
    queue_url: str | None
    llm_base_url: str | None
    llm_api_key: str | None
    llm_extraction_model: str | None
    llm_timeout_seconds: float
    llm_synthesis_model: str | None
    llm_structured_output: Setting
    llm_max_output_tokens: int | None
    embedding_provider: str
    embedding_model: str | None
    embedding_dimension: int
    embedding_base_url: str | None
    max_receives: int
    extraction_stale_seconds: float
    max_body_bytes: int
    max_text_bytes: int
    max_batch_text_bytes: int = 64 * 1024  # every message of one /facts/batch together: one turn's worth of work
    management_requests_per_minute: int = 600  # per management key; 0 turns the management API's limit off
    management_burst: int = 100
    db_user_level: str = 'root'  # 'namespace': a namespace user (signs in naming AGENT_MEMORY_DB_NAMESPACE)

    @property
    def management_keys(self) -> tuple[str, ...]:
        """Every management key this deployment accepts: the current one, then any still in their rotation overlap."""
        return tuple(dict.fromkeys(k for k in (self.management_key, *self.management_keys_previous) if k))


def _positive_int_or_none(raw: str | None) -> int | None:
    if not raw:
        return None
    value = int(raw)
    if value <= 0:
        raise ValueError(f'AGENT_MEMORY_LLM_MAX_OUTPUT_TOKENS must be a positive integer, got {raw!r}')
    return value


def _env(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(f'AGENT_MEMORY_{name}')
    return value if value not in (None, '') else default


def _key_list(raw: str | None) -> tuple[str, ...]:
    """A comma-separated list of keys (blank entries ignored)."""
    return tuple(k.strip() for k in (raw or '').split(',') if k.strip())


def default_db_url() -> str:
    data_dir = Path(_env('DATA_DIR', DEFAULT_DATA_DIR) or DEFAULT_DATA_DIR).resolve()
    return f'surrealkv://{data_dir / "surreal"}'


SECRET_KEYS = ('db_password', 'key_secret', 'management_key', 'management_key_previous', 'llm_api_key')


def _secrets_manager_values(secret_id: str) -> dict[str, str]:
    """Secrets from AWS Secrets Manager (a JSON object with SECRET_KEYS), fetched once per cold start.

    Reading them at run time keeps them out of the function configuration, and a rotation is picked
    up by new containers without a redeploy.
    """
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(secret_id, transform='json', force_fetch=True)  # get_settings caches per cold start
    if not isinstance(value, dict):
        raise RuntimeError(f'secret {secret_id!r} must be a JSON object with keys {SECRET_KEYS}')
    return {k: str(v) for k, v in value.items() if k in SECRET_KEYS and v not in (None, '')}


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    secret_id = _env('SECRET_ID')
    secret = _secrets_manager_values(secret_id) if secret_id else {}
    key_secret = secret.get('key_secret') or _env('KEY_SECRET')
    if not key_secret:
        raise RuntimeError('AGENT_MEMORY_KEY_SECRET (or key_secret in AGENT_MEMORY_SECRET_ID) must be set: key hashes depend on it')
    provider = (_env('EMBEDDING_PROVIDER', 'local') or 'local').lower()
    if provider not in EMBEDDING_PROVIDERS:
        raise RuntimeError(f'AGENT_MEMORY_EMBEDDING_PROVIDER must be one of {EMBEDDING_PROVIDERS}, not {provider!r}')
    user_level = (_env('DB_USER_LEVEL', 'root') or 'root').lower()
    if user_level not in DB_USER_LEVELS:
        raise RuntimeError(f'AGENT_MEMORY_DB_USER_LEVEL must be one of {DB_USER_LEVELS}, not {user_level!r}')
    return Settings(
        db_url=_env('DB_URL') or default_db_url(),
        db_namespace=_env('DB_NAMESPACE', 'agent_memory') or 'agent_memory',
        db_user=_env('DB_USER'),
        db_password=secret.get('db_password') or _env('DB_PASSWORD'),
        db_timeout_seconds=float(_env('DB_TIMEOUT_SECONDS', '10') or 10),
        key_secret=key_secret,
        management_key=secret.get('management_key') or _env('MANAGEMENT_KEY'),
        management_keys_previous=_key_list(secret.get('management_key_previous') or _env('MANAGEMENT_KEY_PREVIOUS')),
        queue_url=_env('QUEUE_URL'),
        llm_base_url=_env('LLM_BASE_URL'),
        llm_api_key=secret.get('llm_api_key') or _env('LLM_API_KEY'),
        llm_extraction_model=_env('LLM_EXTRACTION_MODEL'),
        llm_timeout_seconds=float(_env('LLM_TIMEOUT_SECONDS', '20') or 20),
        llm_synthesis_model=_env('LLM_SYNTHESIS_MODEL'),
        llm_structured_output=parse_setting(_env('LLM_STRUCTURED_OUTPUT')),
        llm_max_output_tokens=_positive_int_or_none(_env('LLM_MAX_OUTPUT_TOKENS')),
        embedding_provider=provider,
        embedding_model=_env('EMBEDDING_MODEL'),
        embedding_dimension=int(_env('EMBEDDING_DIMENSION', '384') or 384),
        embedding_base_url=_env('EMBEDDING_BASE_URL') or _env('LLM_BASE_URL'),
        max_receives=int(_env('MAX_RECEIVES', '3') or 3),
        extraction_stale_seconds=float(_env('EXTRACTION_STALE_SECONDS', '900') or 900),
        max_body_bytes=int(_env('MAX_BODY_BYTES', str(1024 * 1024)) or 0),
        max_text_bytes=int(_env('MAX_TEXT_BYTES', str(64 * 1024)) or 0),
        max_batch_text_bytes=int(_env('MAX_BATCH_TEXT_BYTES', str(64 * 1024)) or 0),
        management_requests_per_minute=int(_env('MANAGEMENT_REQUESTS_PER_MINUTE', '600') or 0),
        management_burst=max(1, int(_env('MANAGEMENT_BURST', '100') or 100)),
        db_user_level=user_level,
    )
