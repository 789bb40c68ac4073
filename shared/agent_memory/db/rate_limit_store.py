"""Token buckets per (context, principal) in the control database, so limits hold across Lambda instances.

The take itself runs inside the authentication round trip (``db/caller_lookup.py``); this module holds its
statements and the sweep that drops idle buckets.
"""

from __future__ import annotations

import datetime as dt

from agent_memory.db.connection import CONTROL_DB, Database

# Refill bucket ``$id`` by elapsed time, then take one token if ``$take``; ``$wait`` is 0 if allowed, else the
# seconds until a token is available. Runs inside the caller's transaction, so concurrent requests serialise.
TAKE_TOKEN = """
LET $b = (SELECT tokens, updated_at FROM ONLY $id) ?? { tokens: $burst, updated_at: $now };
-- A concurrent request may have stored a later clock than ours: a negative datetime difference is an error.
LET $later = $now > $b.updated_at;
LET $elapsed = IF $later THEN duration::millis($now - $b.updated_at) / 1000.0 ELSE 0 END;
LET $t = math::min([$burst, $b.tokens + $elapsed * $rate]);
LET $ok = $t >= 1;
IF $take { UPSERT $id SET tokens = IF $ok THEN $t - 1 ELSE $t END, updated_at = IF $later THEN $now ELSE $b.updated_at END RETURN NONE; };
LET $wait = IF !$take OR $ok THEN 0 ELSE (1 - $t) / $rate END;
"""


class RateLimitStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    def purge_idle(self, before: dt.datetime) -> int:
        """Drop buckets untouched since ``before``: an idle bucket has refilled, so dropping it changes nothing."""
        result = self.db.query(CONTROL_DB, 'RETURN array::len((DELETE rate_bucket WHERE updated_at < $before RETURN BEFORE));',
                               {'before': before})  # fmt: skip
        return int(result[0] or 0)
