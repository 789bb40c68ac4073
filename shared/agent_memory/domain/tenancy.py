"""Principals and the key lifecycle (CONTRACT §3, §10): management and data-plane self-service rules.

* A principal's ``grants`` map verbs (``VERBS``) to scope patterns. No grants means no access (fail closed).
* ``defaultScopes`` is where writes without ``scopes`` go, so it must lie in the principal's write region.
  When omitted it is derived from the first ``memory:write`` pattern (``a/b/*`` and ``a/b`` → ``a/b``,
  ``*`` → ``/``), or ``/`` when the principal cannot write at all.
* A key may carry grants that attenuate its principal's (never widen: 400) and an expiry.
  Keys are stored only as the HMAC of their secret; the secret is returned once, at mint or rotation.
* Self-service (any context key, for its own principal) can never produce a key more powerful than the
  calling key: grants within the caller's effective grants and an expiry no later than the caller's.
"""

from __future__ import annotations

import datetime as dt
import re
import secrets
from collections.abc import Mapping
from typing import Any

from agent_memory.clock import new_id, utcnow, when
from agent_memory.domain.auth import VERBS, Caller, hash_key, mint_token
from agent_memory.domain.params import parse_int
from agent_memory.domain.ports import Control, Principals
from agent_memory.domain.scopes import (
    ROOT,
    attenuate,
    intersect_grants,
    normalise_pattern,
    normalise_scope_sets,
    pattern_within,
    within_region,
)
from agent_memory.errors import BadRequest, Conflict, Forbidden, NotFound, WriteConflict
from agent_memory.models import KEY_NAME_PATTERN, MAX_TTL_SECONDS, KeyCreate, PrincipalCreate, PrincipalPatch, SelfKeyCreate
from agent_memory.rows.control import KeyRecord, PrincipalRow
from agent_memory.rows.scopes import ScopeSets

SYSTEM = 'system'
ADMIN = 'admin'
RESERVED_PRINCIPALS = (SYSTEM, ADMIN)
MAX_PATTERNS_PER_VERB = 64
Grants = dict[str, list[str]]


# ---- grants and default scopes ----------------------------------------------------------------------
def normalise_grants(raw: Mapping[str, Any] | None) -> Grants:
    """Validate a ``{verb: [pattern, …]}`` map: known ``noun:verb`` verbs, valid patterns (400 otherwise)."""
    if raw is None:
        return {}
    grants: Grants = {}
    for verb, patterns in raw.items():
        if verb not in VERBS:
            raise BadRequest(f'unknown grant verb {verb!r}; expected one of {", ".join(VERBS)}')
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise BadRequest(f'grants[{verb!r}] must be a list of scope patterns')
        if len(patterns) > MAX_PATTERNS_PER_VERB:
            raise BadRequest(f'grants[{verb!r}] has more than {MAX_PATTERNS_PER_VERB} patterns')
        normalised: list[str] = []
        for pattern in patterns:
            canonical = normalise_pattern(pattern)
            if canonical not in normalised:
                normalised.append(canonical)
        grants[verb] = normalised
    return grants


def grants_view(grants: Mapping[str, list[str]] | None) -> Grants:
    """Every verb, with an empty list for the verbs not granted."""
    stored = grants or {}
    return {verb: list(stored.get(verb, [])) for verb in VERBS}


def grants_within(inner: Mapping[str, list[str]], outer: Mapping[str, list[str]]) -> bool:
    """Everything ``inner`` grants, ``outer`` grants too."""
    return all(any(pattern_within(p, o) for o in outer.get(verb, [])) for verb, patterns in inner.items() for p in patterns)


def derived_default_scopes(grants: Mapping[str, list[str]]) -> ScopeSets:
    """The node of the first ``memory:write`` pattern (``*`` → ``/``), or ``/`` when there is none."""
    writes = grants.get('memory:write') or []
    if not writes or writes[0] == '*':
        return [[ROOT]]
    first = writes[0]
    return [[first[:-2] if first.endswith('/*') else first]]


def checked_default_scopes(raw: Any, grants: Mapping[str, list[str]]) -> ScopeSets:
    """Explicit default scopes must lie in the write region (when the principal can write at all)."""
    scopes = normalise_scope_sets(raw)
    if scopes is None:
        raise BadRequest('defaultScopes must not be empty')
    writes = grants.get('memory:write') or []
    if writes and not within_region(scopes, writes):
        raise BadRequest("defaultScopes must lie within the principal's memory:write grant")
    return scopes


# ---- principals ---------------------------------------------------------------------------------------
def principal_view(row: PrincipalRow) -> dict[str, Any]:
    return {
        'id': row.id,
        'displayName': row.display_name,
        'kind': row.kind,
        'grants': grants_view(row.grants),
        'defaultScopes': row.default_scopes or [[ROOT]],
        'externalId': row.external_id,
        'createdAt': when(row.created_at),
    }


def create_principal(principals: Principals, request: PrincipalCreate) -> tuple[dict[str, Any], bool]:
    """Create a principal; with ``externalId`` it is create-or-get. Returns (view, created)."""
    if request.external_id is not None:
        existing = principals.by_external_id(request.external_id)
        if existing is not None:
            return principal_view(existing), False
    grants = normalise_grants(request.grants)
    if request.default_scopes is None:
        default_scopes = derived_default_scopes(grants)
    else:
        default_scopes = checked_default_scopes(request.default_scopes, grants)
    principal_id = request.id or f'p_{new_id()}'
    # Self entities are person/"self:<id>" with the name case-folded (CONTRACT §6.2): ids differing only in case
    # would share one, each reading and writing the other's first-person facts.
    if principal_id.lower() in RESERVED_PRINCIPALS or principals.id_taken_ignoring_case(principal_id):
        raise Conflict(f'principal {principal_id!r} already exists')
    row = {
        'display_name': request.display_name,
        'kind': request.kind,
        'grants': grants,
        'default_scopes': default_scopes,
        'external_id': request.external_id,
        'created_at': utcnow(),
    }
    try:
        return principal_view(principals.create(principal_id, row)), True
    except Conflict as exc:
        raise Conflict(f'principal {principal_id!r} already exists') from exc
    except WriteConflict:
        # A unique index refused it: the external id was taken meanwhile (then it is a get), or the display name is taken.
        if request.external_id is not None:
            winner = principals.by_external_id(request.external_id)
            if winner is not None:
                return principal_view(winner), False
        if principals.by_display_name(request.display_name) is not None:
            raise Conflict(f'a principal named {request.display_name!r} already exists') from None
        raise


def get_principal(principals: Principals, principal_id: str) -> PrincipalRow:
    row = principals.get(principal_id)
    if row is None:
        raise NotFound('principal not found')
    return row


def update_principal(principals: Principals, principal_id: str, request: PrincipalPatch) -> dict[str, Any]:
    """Apply a PATCH (displayName, kind, grants, defaultScopes); ``system`` is immutable."""
    if principal_id == SYSTEM:
        raise Forbidden('the system principal cannot be changed')
    current = get_principal(principals, principal_id)
    given = request.model_fields_set
    for name in given:
        if getattr(request, name) is None:
            raise BadRequest(f'{name} must not be null')
    changes: dict[str, Any] = {}
    if 'display_name' in given:
        changes['display_name'] = request.display_name
    if 'kind' in given:
        changes['kind'] = request.kind
    grants = normalise_grants(request.grants) if 'grants' in given else dict(current.grants)
    if 'grants' in given:
        changes['grants'] = grants
    if 'default_scopes' in given:
        changes['default_scopes'] = checked_default_scopes(request.default_scopes, grants)
    else:
        writes = grants.get('memory:write') or []
        if 'grants' in given and writes and not within_region(current.default_scopes or [[ROOT]], writes):
            raise BadRequest('the new memory:write grant does not cover the current defaultScopes; send defaultScopes too')
    if not changes:
        return principal_view(current)
    try:
        row = principals.update(principal_id, changes, utcnow())
    except WriteConflict:
        if 'display_name' in changes and principals.by_display_name(str(changes['display_name'])) is not None:
            raise Conflict(f'a principal named {changes["display_name"]!r} already exists') from None
        raise
    if row is None:
        raise NotFound('principal not found')
    return principal_view(row)


def delete_principal(principals: Principals, principal_id: str) -> None:
    """Delete a principal, its keys and everything bound to it (db/principal_store.py); ``system`` and ``admin`` stay."""
    if principal_id in RESERVED_PRINCIPALS:
        raise Forbidden(f'the {principal_id} principal cannot be deleted')
    if not principals.delete_with_everything(principal_id):
        raise NotFound('principal not found')


# ---- keys ---------------------------------------------------------------------------------------------
def key_view(key: KeyRecord, secret: str | None = None) -> dict[str, Any]:
    """A key as clients see it: never its hash; the secret only right after mint or rotation."""
    view: dict[str, Any] = {
        'name': key.name,
        'principalId': key.principal,
        'grants': key.grants,
        'expiresAt': when(key.expires_at),
        'createdAt': when(key.created_at),
    }
    if secret is not None:
        view['secret'] = secret
    return view


def check_key_name(name: str) -> str:
    if not re.fullmatch(KEY_NAME_PATTERN, name):
        raise BadRequest('key name must match [A-Za-z0-9_.-]{1,64}')
    return name


def parse_ttl(raw: str | None) -> int | None:
    """``?ttlSeconds=`` as a positive integer (400 otherwise)."""
    if raw is None or raw == '':
        return None
    return parse_int(raw, 'ttlSeconds', 1, MAX_TTL_SECONDS, 0)


def expiry(ttl_seconds: int | None, expires_at: dt.datetime | None, now: dt.datetime) -> dt.datetime | None:
    if ttl_seconds is not None and expires_at is not None:
        raise BadRequest('give at most one of ttlSeconds and expiresAt')
    if ttl_seconds is not None:
        return now + dt.timedelta(seconds=ttl_seconds)
    if expires_at is not None and expires_at <= now:
        raise BadRequest('expiresAt must be in the future')
    if expires_at is not None and expires_at > now + dt.timedelta(seconds=MAX_TTL_SECONDS):
        raise BadRequest('expiresAt may be at most 10 years ahead (the key lifetime cap, as for ttlSeconds)')
    return expires_at


def _mintable_principal(principals: Principals, principal_id: str) -> PrincipalRow:
    if principal_id == SYSTEM:
        raise Forbidden('the system principal cannot hold keys')
    return get_principal(principals, principal_id)


def mint_key(
    control: Control, principals: Principals, principal_id: str, name: str, request: KeyCreate, ttl_query: int | None = None
) -> dict[str, Any]:
    """Management mint: grants may only attenuate the principal's (400), duplicate name → 409; secret shown once."""
    check_key_name(name)
    principal = _mintable_principal(principals, principal_id)
    key_grants = None
    if request.grants is not None:
        key_grants = attenuate(dict(principal.grants), normalise_grants(request.grants))
    if ttl_query is not None and request.ttl_seconds is not None:
        raise BadRequest('give ttlSeconds once (query or body)')
    now = utcnow()
    expires_at = expiry(request.ttl_seconds if request.ttl_seconds is not None else ttl_query, request.expires_at, now)
    secret = mint_token()
    record = control.create_key(KeyRecord(principals.context_id, principal_id, name, hash_key(secret), key_grants, expires_at), now)
    return key_view(record, secret)


def list_keys(control: Control, principals: Principals, principal_id: str) -> list[dict[str, Any]]:
    get_principal(principals, principal_id)
    return [key_view(k) for k in control.list_keys(principals.context_id, principal_id)]


def _existing_key(control: Control, context_id: str, principal_id: str, name: str) -> KeyRecord:
    key = control.key_by_name(context_id, principal_id, name)
    if key is None:
        raise NotFound('key not found')
    return key


def rotate_key(control: Control, context_id: str, principal_id: str, name: str, ttl_seconds: int | None = None) -> dict[str, Any]:
    """New secret for an existing key; the old secret stops working in the same transaction.

    Grants are kept; the expiry is kept unless ``ttlSeconds`` is given.
    """
    old = _existing_key(control, context_id, principal_id, name)
    now = utcnow()
    expires_at = expiry(ttl_seconds, None, now) if ttl_seconds is not None else old.expires_at
    secret = mint_token()
    return key_view(control.rotate_key(old, hash_key(secret), expires_at, now), secret)


def delete_key(control: Control, context_id: str, principal_id: str, name: str) -> None:
    if not control.delete_key(context_id, principal_id, name):
        raise NotFound('key not found')


# ---- self-service (data plane, the caller's own principal) --------------------------------------------
def _calling_key(control: Control, caller: Caller) -> KeyRecord:
    if caller.delegated:
        raise Forbidden('keys cannot be managed while acting on behalf of another principal')
    key = control.get_key(caller.key_id)
    if key is None:  # deleted by a concurrent request since authentication
        raise NotFound('key not found')
    return key


def _earliest(a: dt.datetime | None, b: dt.datetime | None) -> dt.datetime | None:
    return min((x for x in (a, b) if x is not None), default=None)


def _no_stronger_than_caller(principals: Principals, caller: Caller, calling: KeyRecord, key: KeyRecord) -> None:
    """A key may rotate or delete sibling keys only if they grant nothing it lacks and expire no later."""
    if key.hash == calling.hash:
        return
    principal = principals.get(caller.principal_id)
    target = intersect_grants(grants_view(principal.grants if principal else None), key.grants)
    lives_longer = calling.expires_at is not None and (key.expires_at is None or key.expires_at > calling.expires_at)
    if not grants_within(target, caller.grants) or lives_longer:
        raise Forbidden('that key has more authority than the calling key')


def self_list_keys(control: Control, caller: Caller) -> dict[str, Any]:
    current = caller.key_id
    keys = control.list_keys(caller.context_id, caller.principal_id)
    return {'keys': [{**key_view(k), 'current': k.hash == current} for k in keys]}


def self_mint_key(control: Control, caller: Caller, request: SelfKeyCreate, ttl_query: int | None) -> dict[str, Any]:
    """Mint a key for the caller's own principal, never wider or longer-lived than the calling key."""
    calling = _calling_key(control, caller)
    if ttl_query is not None and request.ttl_seconds is not None:
        raise BadRequest('give ttlSeconds once (query or body)')
    if request.grants is not None:
        key_grants: Grants | None = attenuate(caller.grants, normalise_grants(request.grants))
    else:
        # Inherit what the calling key has: its own attenuation (or the principal's grants when it has none).
        key_grants = None if calling.grants is None else grants_view(caller.grants)
    now = utcnow()
    requested = expiry(request.ttl_seconds if request.ttl_seconds is not None else ttl_query, request.expires_at, now)
    expires_at = _earliest(requested, calling.expires_at)
    name = request.name or f'k_{secrets.token_hex(6)}'
    secret = mint_token()
    record = control.create_key(KeyRecord(caller.context_id, caller.principal_id, name, hash_key(secret), key_grants, expires_at), now)
    return key_view(record, secret)


def self_rotate_key(control: Control, principals: Principals, caller: Caller, name: str, ttl_seconds: int | None) -> dict[str, Any]:
    calling = _calling_key(control, caller)
    key = _existing_key(control, caller.context_id, caller.principal_id, check_key_name(name))
    _no_stronger_than_caller(principals, caller, calling, key)
    now = utcnow()
    # Never beyond the calling key's own expiry (a sibling's is already no later; a new TTL may not extend it).
    expires_at = _earliest(expiry(ttl_seconds, None, now) if ttl_seconds is not None else key.expires_at, calling.expires_at)
    secret = mint_token()
    return key_view(control.rotate_key(key, hash_key(secret), expires_at, now), secret)


def self_delete_key(control: Control, principals: Principals, caller: Caller, name: str) -> None:
    calling = _calling_key(control, caller)
    key = _existing_key(control, caller.context_id, caller.principal_id, check_key_name(name))
    _no_stronger_than_caller(principals, caller, calling, key)
    if not control.delete_key(caller.context_id, caller.principal_id, name):
        raise NotFound('key not found')
