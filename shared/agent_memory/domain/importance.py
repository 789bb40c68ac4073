"""Importance: where a fact starts, how it decays and how a use reinforces it (CONTRACT §5).

The repository applies these factors; it is handed them (``db.reinforcement.Reinforcement``, the decaying categories)
rather than importing them.
"""

from __future__ import annotations

INITIAL_IMPORTANCE: dict[str, float] = {'identity': 1.0, 'knowledge': 0.8, 'context': 0.5}
DAILY_DECAY: dict[str, float] = {'knowledge': 0.995, 'context': 0.95}  # identity does not decay
IMPORTANCE_MIN, IMPORTANCE_MAX = 0.0, 2.0
REINFORCEMENT = 1.1
