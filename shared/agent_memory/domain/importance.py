"""Importance: where a fact starts, how it decays and how a use reinforces it (CONTRACT §5).

The repository is handed the reinforcement factor, the cap and the decaying categories (``db.reinforcement.ImportanceRule``,
built by the composition root) rather than importing them. The daily factors are also written into the schema's
``fn::decayed_importance`` (context migration 0015), which computes ``importance`` on read: the two must agree.
"""

from __future__ import annotations

INITIAL_IMPORTANCE: dict[str, float] = {'identity': 1.0, 'knowledge': 0.8, 'context': 0.5}
DAILY_DECAY: dict[str, float] = {'knowledge': 0.995, 'context': 0.95}  # identity does not decay
IMPORTANCE_MIN, IMPORTANCE_MAX = 0.0, 2.0
REINFORCEMENT = 1.1
