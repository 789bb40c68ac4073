"""How keys are stored: an HMAC-SHA256 of the token under the deployment's secret, never the token itself.

Its own module so that a cold start registers the management keys without importing authentication (the caller
lookup, the memory store and the pydantic config models): ``GET /health`` needs none of those.
"""

from __future__ import annotations

import hashlib
import hmac

from agent_memory.clock import utcnow
from agent_memory.config import get_settings
from agent_memory.domain.ports import Control


def hash_key(token: str) -> str:
    return hmac.new(get_settings().key_secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def sync_management_keys(control: Control, tokens: tuple[str, ...]) -> None:
    """The configured management keys are authoritative: register them and revoke every other one (cold start)."""
    control.replace_management_keys([hash_key(t) for t in tokens], utcnow())
