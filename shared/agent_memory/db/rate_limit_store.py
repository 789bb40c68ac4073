"""Token buckets per (context, principal) in the control database, so limits hold across Lambda instances."""

from __future__ import annotations

import datetime as dt

from agent_memory.db.connection import CONTROL_DB, Database, run_with_retry
from agent_memory.db.records import rid

# Refill by elapsed time, then take one token; all in one transaction so concurrent requests serialise.
_TAKE = """
BEGIN TRANSACTION;
LET $b = (SELECT tokens, updated_at FROM ONLY $id) ?? { tokens: $burst, updated_at: $now };
-- A concurrent request may have stored a later clock than ours: a negative datetime difference is an error.
LET $later = $now > $b.updated_at;
LET $elapsed = IF $later THEN duration::millis($now - $b.updated_at) / 1000.0 ELSE 0 END;
LET $t = math::min([$burst, $b.tokens + $elapsed * $rate]);
LET $ok = $t >= 1;
UPSERT $id SET tokens = IF $ok THEN $t - 1 ELSE $t END, updated_at = IF $later THEN $now ELSE $b.updated_at END RETURN NONE;
RETURN IF $ok THEN 0 ELSE (1 - $t) / $rate END;
COMMIT TRANSACTION;
"""


class RateLimitStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def take(self, bucket: tuple[str, str], per_minute: int, burst: int, now: dt.datetime) -> float:
        """Take one token from ``bucket``; return 0 if allowed, else the seconds until one is available."""
        params = {'id': rid('rate_bucket', list(bucket)), 'burst': float(burst), 'rate': per_minute / 60.0, 'now': now}
        result = run_with_retry(lambda: self.db.query(CONTROL_DB, _TAKE, params))
        return float(result[-2] or 0.0)

    def purge_idle(self, before: dt.datetime) -> int:
        """Drop buckets untouched since ``before``: an idle bucket has refilled, so dropping it changes nothing."""
        result = self.db.query(CONTROL_DB, 'RETURN array::len((DELETE rate_bucket WHERE updated_at < $before RETURN BEFORE));',
                               {'before': before})  # fmt: skip
        return int(result[0] or 0)
