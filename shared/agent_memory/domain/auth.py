"""API keys: minting, hashing (HMAC-SHA256 with a server secret) and authentication (CONTRACT §3).

Keys are looked up by their HMAC, so the plaintext never reaches the database and an unknown,
expired or other-context key all fail the same way: 401 with one body.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agent_memory.config import get_settings
from agent_memory.db.control_store import ControlStore
from agent_memory.db.memory_store import MemoryStore
from agent_memory.domain.context_config import ContextConfig, effective_config
from agent_memory.domain.ids import utcnow
from agent_memory.domain.scopes import ScopeSets
from agent_memory.errors import Unauthorized, Unprocessable

CONTEXT_ID = re.compile(r'^[A-Za-z0-9_-]{1,64}$')
UNAUTHORIZED = 'missing, invalid or expired API key'
VERBS = ('memory:read', 'memory:write', 'memory:forget', 'grant:manage')


RESERVED_CONTEXT_IDS = frozenset({'contexts', 'health'})  # path segments of /api/v1/contexts and /api/v1/health


def check_context_id(context_id: str) -> str:
    if not CONTEXT_ID.match(context_id):
        raise Unprocessable('context id must match [A-Za-z0-9_-]{1,64}')
    if context_id in RESERVED_CONTEXT_IDS:
        raise Unprocessable(f'context id {context_id!r} is reserved')
    return context_id


def hash_key(token: str) -> str:
    return hmac.new(get_settings().key_secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def mint_token(prefix: str = 'am') -> str:
    return f'{prefix}_{secrets.token_urlsafe(32)}'


def bearer(headers: Mapping[str, str]) -> str:
    value = next((v for k, v in headers.items() if k.lower() == 'authorization'), '')
    scheme, _, token = value.partition(' ')
    if scheme.lower() != 'bearer' or not token.strip():
        raise Unauthorized(UNAUTHORIZED)
    return token.strip()


@dataclass(frozen=True)
class Caller:
    context_id: str
    principal_id: str
    display_name: str
    kind: str
    grants: dict[str, list[str]]
    default_scopes: ScopeSets
    config: ContextConfig
    key_grants: dict[str, list[str]] | None = field(default=None)

    def patterns(self, verb: str) -> list[str]:
        return list(self.grants.get(verb, []))


def authenticate(control: ControlStore, store_for: Any, headers: Mapping[str, str], context_id: str) -> Caller:
    """Resolve the caller of a data-plane request or raise 401 (same body for every failure)."""
    token = bearer(headers)
    digest = hash_key(token)
    key, context = control.find_key(digest, context_id)
    if key is None or context is None or key.context != context_id or not hmac.compare_digest(key.hash, digest):
        raise Unauthorized(UNAUTHORIZED)
    if key.expires_at is not None and key.expires_at <= utcnow():
        raise Unauthorized(UNAUTHORIZED)
    store: MemoryStore = store_for(context_id)
    principal = store.get_principal(key.principal)
    if principal is None:
        raise Unauthorized(UNAUTHORIZED)
    grants = {verb: list(principal.get('grants', {}).get(verb, [])) for verb in VERBS}
    return Caller(
        context_id=context_id,
        principal_id=key.principal,
        display_name=principal['display_name'],
        kind=principal['kind'],
        grants=grants,
        default_scopes=principal.get('default_scopes') or [['/']],
        config=effective_config(context.get('config')),
        key_grants=key.grants,
    )


def authenticate_management(control: ControlStore, headers: Mapping[str, str]) -> None:
    digest = hash_key(bearer(headers))
    stored = control.management_key_hash(digest)
    if stored is None or not hmac.compare_digest(stored, digest):
        raise Unauthorized(UNAUTHORIZED)
