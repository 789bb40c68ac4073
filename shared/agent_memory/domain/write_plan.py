"""What one write will change, decided before the transaction that applies it.

A plan is an ordered list of typed operations (``agent_memory.write_ops``). The reconciler fills it from what it
read; the store applies the whole plan in one transaction and re-checks every address the plan relied on (the guard
operations), so a concurrent writer makes the transaction fail and the caller re-plans instead of double-applying.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TypeVar

from agent_memory.write_ops import Operation

Op = TypeVar('Op', bound=Operation)


@dataclass
class WritePlan:
    now: dt.datetime
    session_id: str | None  # the session's storage key, when the write stores turns
    operations: list[Operation] = field(default_factory=list)

    def add(self, *operations: Operation) -> None:
        self.operations.extend(operations)

    def of(self, kind: type[Op]) -> Iterator[Op]:
        """The planned operations of one kind, in plan order."""
        return (op for op in self.operations if isinstance(op, kind))

    def swap(self, old: Operation, new: Operation) -> None:
        """Replace a planned operation (operations are immutable) keeping its place."""
        self.operations[next(i for i, op in enumerate(self.operations) if op is old)] = new
