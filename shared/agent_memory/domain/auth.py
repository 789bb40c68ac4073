"""API keys: minting, hashing (HMAC-SHA256 with a server secret) and authentication (CONTRACT §3).

Keys are looked up by their HMAC, so the plaintext never reaches the database and an unknown,
expired or other-context key all fail the same way: 401 with one body.
"""

from __future__ import annotations

import hmac
import math
import re
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from agent_memory.clock import utcnow
from agent_memory.config import get_settings
from agent_memory.domain.context_config import ContextConfig, RateLimitConfig, effective_config
from agent_memory.domain.key_hashes import hash_key as hash_key  # re-exported: callers name it from auth
from agent_memory.domain.ports import Control
from agent_memory.domain.scopes import intersect_grants
from agent_memory.errors import Forbidden, TooManyRequests, Unauthorized, Unprocessable
from agent_memory.rows.control import CallerRows, PrincipalRow, RateDefaults
from agent_memory.rows.conversation import SessionRow
from agent_memory.rows.scopes import ScopeSets

CONTEXT_ID = re.compile(r'[A-Za-z0-9_-]{1,64}')  # always fullmatch: `$` would accept a trailing newline
UNAUTHORIZED = 'missing, invalid or expired API key'
VERBS = ('memory:read', 'memory:write', 'memory:forget', 'grant:manage')


RESERVED_CONTEXT_IDS = frozenset({'contexts', 'health'})  # path segments of /api/v1/contexts and /api/v1/health


def check_context_id(context_id: str) -> str:
    if not CONTEXT_ID.fullmatch(context_id):
        raise Unprocessable('context id must match [A-Za-z0-9_-]{1,64}')
    if context_id in RESERVED_CONTEXT_IDS:
        raise Unprocessable(f'context id {context_id!r} is reserved')
    return context_id


def mint_token(prefix: str = 'am') -> str:
    return f'{prefix}_{secrets.token_urlsafe(32)}'


def bearer(headers: Mapping[str, str]) -> str:
    value = next((v for k, v in headers.items() if k.lower() == 'authorization'), '')
    scheme, _, token = value.partition(' ')
    if scheme.lower() != 'bearer' or not token.strip():
        raise Unauthorized(UNAUTHORIZED)
    return token.strip()


# The reserved principals: admin holds every grant and system runs the background jobs, so acting as either would
# lift a manager out of its region and record its writes under a name nobody can audit.
UNDELEGABLE = frozenset({'admin', 'system'})
DELEGATION_HEADERS = ('x-memory-on-behalf-of', 'x-agent-memory-on-behalf-of', 'x-spectron-on-behalf-of')


@dataclass(frozen=True)
class Caller:
    context_id: str
    principal_id: str  # whom the request acts as (the delegated principal when delegating)
    display_name: str
    kind: str
    grants: dict[str, list[str]]  # effective: principal ∩ key attenuation (∩ manager's region when delegating)
    default_scopes: ScopeSets
    config: ContextConfig
    key_grants: dict[str, list[str]] | None = field(default=None)
    key_id: str = ''
    acting_principal_id: str | None = None  # the key's own principal when delegating
    principal_grants: dict[str, list[str]] = field(default_factory=dict)  # the key's principal, before attenuation
    # (session id, the sessions that id names for this principal), read with authentication: domain/sessions.py
    sessions_named: tuple[str, tuple[SessionRow, ...]] | None = None

    def patterns(self, verb: str) -> list[str]:
        return list(self.grants.get(verb, []))

    @property
    def delegated(self) -> bool:
        return self.acting_principal_id is not None

    @property
    def key_holder(self) -> str:
        """The principal whose key made the request (the manager, when delegating)."""
        return self.acting_principal_id or self.principal_id


def _header(headers: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    lowered = {k.lower(): v for k, v in headers.items()}
    return next((lowered[n].strip() for n in names if lowered.get(n, '').strip()), None)


def _principal_grants(principal: PrincipalRow) -> dict[str, list[str]]:
    stored = principal.grants
    return {verb: list(stored.get(verb, [])) for verb in VERBS}


def authenticate(control: Control, migrate: Callable[[str], object], headers: Mapping[str, str], context_id: str, *,
                 throttle: bool = False, session_id: str | None = None) -> Caller:  # fmt: skip
    """Resolve the caller of a data-plane request or raise 401 (same body for every failure), in one round trip.

    With ``throttle``, the same round trip takes a token from the key holder's rate-limit bucket (429 when empty);
    with ``session_id``, it also reads the sessions that id may name for the caller (``Caller.sessions_named``).
    """
    digest = hash_key(bearer(headers))
    target = _header(headers, DELEGATION_HEADERS)
    if target is not None:
        target = target.removeprefix('principal:')  # clients send the bare id or the record form
    rows = control.resolve_caller(digest, context_id, target, _RATE_DEFAULTS if throttle else None, utcnow(), session_id)
    caller = _caller_for(context_id, digest, rows)
    if session_id is not None and rows.sessions is not None:
        caller = replace(caller, sessions_named=(session_id, tuple(rows.sessions)))
    migrate(context_id)  # the context's schema migrated (once per process) before the request uses it
    if target is not None and target != caller.principal_id:
        caller = delegate(caller, target, rows.target)
    if rows.wait > 0:
        limit = caller.config.rate_limit
        raise TooManyRequests(f'rate limit of {limit.requests_per_minute} requests/minute exceeded', retry_after=math.ceil(rows.wait))
    return caller


_DEFAULT_LIMIT = RateLimitConfig()
_RATE_DEFAULTS = RateDefaults(_DEFAULT_LIMIT.enabled, _DEFAULT_LIMIT.requests_per_minute, _DEFAULT_LIMIT.burst)


def _caller_for(context_id: str, digest: str, rows: CallerRows) -> Caller:
    key, context, principal = rows.key, rows.context, rows.principal
    if key is None or context is None or key.context != context_id or not hmac.compare_digest(key.hash, digest):
        raise Unauthorized(UNAUTHORIZED)
    if key.expires_at is not None and key.expires_at <= utcnow():
        raise Unauthorized(UNAUTHORIZED)
    if principal is None:
        raise Unauthorized(UNAUTHORIZED)
    own = _principal_grants(principal)
    return Caller(
        context_id=context_id,
        principal_id=key.principal,
        display_name=principal.display_name,
        kind=principal.kind,
        grants=intersect_grants(own, key.grants),
        default_scopes=principal.default_scopes or [['/']],
        config=effective_config(context.config),
        key_grants=key.grants,
        key_id=digest,
        principal_grants=own,
    )


CONTEXT_HEADERS = ('x-agent-memory-context', 'x-memory-context', 'x-spectron-context')


def authenticate_key(control: Control, migrate: Callable[[str], object], headers: Mapping[str, str],
                     requested: str | None = None, *, throttle: bool = False) -> Caller:  # fmt: skip
    """Resolve a caller whose context is the one its key belongs to (MCP has no context in the path).

    A context named by ``requested`` or a context header must be the key's own; any mismatch is the same 401.
    """
    context_id = control.key_context(hash_key(bearer(headers)))
    if context_id is None:
        raise Unauthorized(UNAUTHORIZED)
    for named in (requested, _header(headers, CONTEXT_HEADERS)):
        if named is not None and named != context_id:
            raise Unauthorized(UNAUTHORIZED)
    return authenticate(control, migrate, headers, context_id, throttle=throttle)


def delegate(caller: Caller, target_id: str, target: PrincipalRow | None) -> Caller:
    """Act for another principal (``target``, None if it does not exist): needs ``grant:manage``; the result never
    exceeds the manager's region."""
    managed = caller.patterns('grant:manage')
    if not managed:
        raise Forbidden('acting on behalf of another principal needs grant:manage')
    if target_id.casefold() in UNDELEGABLE:
        raise Forbidden(f'nobody acts on behalf of {target_id!r}')
    if target is None:
        raise Forbidden('cannot act on behalf of that principal')
    region = dict.fromkeys(VERBS, managed)
    grants = intersect_grants(region, _principal_grants(target))
    return replace(
        caller,
        principal_id=target_id,
        display_name=target.display_name,
        kind=target.kind,
        grants=grants,
        default_scopes=target.default_scopes or [['/']],
        acting_principal_id=caller.principal_id,
    )


def authenticate_management(control: Control, headers: Mapping[str, str]) -> None:
    """401 for anything but a configured management key; 429 when that key's bucket is empty (one round trip)."""
    digest = hash_key(bearer(headers))
    settings = get_settings()
    stored, wait = control.management_key_with_token(digest, utcnow(), settings.management_requests_per_minute, settings.management_burst)
    if stored is None or not hmac.compare_digest(stored, digest):
        raise Unauthorized(UNAUTHORIZED)
    if wait > 0:
        per_minute = settings.management_requests_per_minute
        raise TooManyRequests(f'management rate limit of {per_minute} requests/minute exceeded', retry_after=math.ceil(wait))
