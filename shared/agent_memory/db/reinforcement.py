"""The reinforcement statement (CONTRACT §5: the current importance times a factor, capped), for a request's own
transaction or on its own. The factor and cap are the domain's (``domain.importance``), handed in."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_memory.db.records import Tx, rid
from agent_memory.db.sdk import RecordID

REINFORCE_TABLES = ('attribute', 'relates_to', 'action', 'entity')


@dataclass(frozen=True, slots=True)
class ImportanceRule:
    """The domain's importance policy as the repository applies it (built by the composition root)."""

    reinforce_by: float  # a use multiplies the current importance by this
    cap: float  # and never lifts it above this
    decaying: tuple[str, ...]  # the memory categories a decay step lowers


def reinforced_ids(refs: Iterable[tuple[str, Any]]) -> list[RecordID]:
    return [rid(table, key) for table, key in refs if table in REINFORCE_TABLES]


def reinforce_statement(tx: Tx, ids: list[RecordID], rule: ImportanceRule) -> str:
    """``UPDATE`` of every id in one statement; the caller decides what it returns.

    ``importance`` is computed (migration 0015): the reinforced current value becomes the row's base at the
    decay clock read in the same statement, so later decay steps start from it.
    """
    return (
        f'UPDATE {tx.p(ids)} SET importance_base = math::min([{tx.p(rule.cap)}, '
        f'fn::decayed_importance(importance_base, memory_category, decay_epoch) * {tx.p(rule.reinforce_by)}]), '
        'decay_epoch = lifecycle_clock:decay.decay_epoch'
    )
