"""Everything a data-plane request needs to know about its caller, in one database round trip (two when the key is
not valid for the context: the refusal reads the key and context again without entering the context's database).

One transaction reads the key (control database), the context it names, the key's principal and the
delegation target (the context's own database), and takes a token from the principal's rate-limit bucket.
A remote database charges every round trip, and this one precedes every authenticated request.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agent_memory.db import to_rows
from agent_memory.db.connection import CONTROL_DB, Database, QueryFailed, context_db_name, run_with_retry
from agent_memory.db.control_store import key_record
from agent_memory.db.predicates import SESSIONS_NAMED
from agent_memory.db.rate_limit_store import TAKE_TOKEN
from agent_memory.db.records import rid
from agent_memory.rows.control import ContextRow, KeyRecord, PrincipalRow
from agent_memory.rows.conversation import SessionRow

# Never bind $c, $s, $cl, $p or $pre here (closure names in the visibility predicates, docs/architecture.md).
# The token is taken only for a valid, unexpired key of this context whose principal exists; the bucket's
# settings are the context's ``rate_limit`` override over the defaults passed in.
_RESOLVE = """
BEGIN TRANSACTION;
LET $am_key = (SELECT * FROM ONLY $key_id);
LET $am_ctx = (SELECT * FROM ONLY $ctx_id);
LET $am_ok = $am_key != NONE AND $am_ctx != NONE AND $am_key.context = $ctx
    AND ($am_key.expires_at = NONE OR $am_key.expires_at > $now);
-- Switching into a database creates it: an unknown key or context stops here, before the switch.
IF !$am_ok { THROW '%(unknown)s' };
USE DB %(context_db)s;
LET $am_principal = IF $am_ok THEN (SELECT * FROM ONLY type::record('principal', $am_key.principal)) END;
LET $am_target = IF $am_principal != NONE AND $target != NONE THEN (SELECT * FROM ONLY type::record('principal', $target)) END;
-- The sessions named by the request's session id, for whom the request acts (the target when delegating).
LET $am_as = IF $am_target != NONE THEN $target ELSE $am_key.principal END;
LET $own = IF $am_as != NONE AND $named_session != NONE THEN type::record('session', $am_as + '/' + $named_session) END;
LET $legacy = IF $named_session != NONE THEN type::record('session', $named_session) END;
LET $client = $named_session;
LET $am_sessions = IF $am_principal != NONE AND $named_session != NONE THEN %(sessions_named)s END;
USE DB %(control_db)s;
LET $am_limit = $am_ctx.config.rate_limit ?? {};
LET $take = $throttle AND $am_principal != NONE AND ($am_limit.enabled ?? $default_enabled);
LET $id = type::record('rate_bucket', [$ctx, $am_key.principal ?? '']);
LET $burst = <float> ($am_limit.burst ?? $default_burst);
LET $rate = ($am_limit.requests_per_minute ?? $default_rpm) / 60.0;
%(take)s
RETURN { key: $am_key, context: $am_ctx, principal: $am_principal, target: $am_target, sessions: $am_sessions, wait: $wait };
COMMIT TRANSACTION;
"""


_UNKNOWN_CALLER = 'am-caller-unknown'
# What the refusal needs to know (which of key and context exist), read without leaving the control database.
_REFUSED = 'RETURN { key: (SELECT * FROM ONLY $key_id), context: (SELECT * FROM ONLY $ctx_id) };'


@dataclass(frozen=True)
class RateDefaults:
    enabled: bool
    requests_per_minute: int
    burst: int


@dataclass(frozen=True)
class CallerRows:
    key: KeyRecord | None
    context: ContextRow | None
    principal: PrincipalRow | None  # None unless the key is valid for this context
    target: PrincipalRow | None  # the delegation target, None when absent or unknown
    sessions: list[SessionRow] | None  # the sessions named ``session`` (see SESSIONS_NAMED), None when not asked
    wait: float  # 0 when a token was taken (or throttling is off), else seconds until one is available


def resolve_caller(db: Database, key_hash: str, context_id: str, target: str | None, throttle: RateDefaults | None,
                   now: dt.datetime, session: str | None = None) -> CallerRows:  # fmt: skip
    """Read the key, context, principal, delegation target and the sessions named ``session``; take a rate-limit
    token unless ``throttle`` is None."""
    sql = _RESOLVE % {
        'context_db': context_db_name(context_id),
        'control_db': CONTROL_DB,
        'take': TAKE_TOKEN,
        'sessions_named': SESSIONS_NAMED,
        'unknown': _UNKNOWN_CALLER,
    }
    defaults = throttle or RateDefaults(False, 1, 1)
    params = {
        'key_id': rid('api_key', key_hash),
        'ctx_id': rid('context', context_id),
        'ctx': context_id,
        'target': target,
        'named_session': session or None,  # $session is a protected variable; '' names no record
        'now': now,
        'throttle': throttle is not None,
        'default_enabled': defaults.enabled,
        'default_rpm': defaults.requests_per_minute,
        'default_burst': defaults.burst,
    }
    try:
        row = run_with_retry(lambda: db.query(CONTROL_DB, sql, params))[-2]
    except QueryFailed as exc:
        if _UNKNOWN_CALLER not in str(exc):
            raise
        row = db.query(CONTROL_DB, _REFUSED, {'key_id': params['key_id'], 'ctx_id': params['ctx_id']})[0]
    return CallerRows(
        key=key_record(row['key']) if row.get('key') else None,
        context=to_rows.context(row['context']) if row.get('context') else None,
        principal=to_rows.principal(row['principal']) if row.get('principal') else None,
        target=to_rows.principal(row['target']) if row.get('target') else None,
        sessions=[to_rows.session(r) for r in row['sessions']] if row.get('sessions') is not None else None,
        wait=float(row.get('wait') or 0.0),
    )


def key_context(db: Database, key_hash: str) -> str | None:
    """The context a key belongs to (MCP has no context in the path), or None for an unknown key."""
    value = db.query(CONTROL_DB, 'SELECT VALUE context FROM ONLY $id;', {'id': rid('api_key', key_hash)})[0]
    return str(value) if value else None
