"""The reinforcement statement (CONTRACT §5: importance ×1.1 of the current value, cap 2.0), for a request's own
transaction or on its own."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_memory.db.records import Tx, rid
from agent_memory.db.sdk import RecordID
from agent_memory.domain.vocabulary import IMPORTANCE_MAX, REINFORCEMENT

REINFORCE_TABLES = ('attribute', 'relates_to', 'action', 'entity')


def reinforced_ids(refs: Iterable[tuple[str, Any]]) -> list[RecordID]:
    return [rid(table, key) for table, key in refs if table in REINFORCE_TABLES]


def reinforce_statement(tx: Tx, ids: list[RecordID]) -> str:
    """``UPDATE`` of every id in one statement; the caller decides what it returns.

    ``importance`` is computed (migration 0015): the reinforced current value becomes the row's base at the
    decay clock read in the same statement, so later decay steps start from it.
    """
    return (
        f'UPDATE {tx.p(ids)} SET importance_base = math::min([{tx.p(IMPORTANCE_MAX)}, '
        f'fn::decayed_importance(importance_base, memory_category, decay_epoch) * {tx.p(REINFORCEMENT)}]), '
        'decay_epoch = lifecycle_clock:decay.decay_epoch'
    )
