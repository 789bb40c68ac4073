"""Stage 0 is linear in a turn's length on hostile input (issue 12 hole 3: a trailing-filler pattern backtracked from
every comma of a run, 51 s for 20 KB).

A complexity check, not a speed goal: each case is timed in CPU time (``time.process_time``, best of 3, so other
processes on the machine do not count) at 2 KB and at 16 KB, and the cost per KB may not grow by more than 3× between
them — linear work keeps it near 1×, quadratic work multiplies it by ~8×. The absolute numbers are in
``bench/stage0_adversarial.py``.
"""

from __future__ import annotations

import datetime as dt
import time

import pytest

from agent_memory.extraction.deterministic import extract
from agent_memory.extraction.model import ExtractionContext

SMALL_KB, LARGE_KB, MAX_GROWTH = 2, 16, 3.0

HOSTILE_UNITS = [', ', ',', ' , please', '", "', 'and I ', 'my a is ', 'I like , ', '— well, ', ', actually ', 'please, ', 'if I, ']


def _cpu_seconds(text: str) -> float:
    ctx = ExtractionContext(role='user', observed_at=dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
    best = float('inf')
    for _ in range(3):
        started = time.process_time()
        extract(text, ctx)
        best = min(best, time.process_time() - started)
    return max(best, 1e-4)  # the timer's resolution: a case too fast to time at 2 KB cannot show growth


def _sized(unit: str, kb: int) -> str:
    return (unit * (kb * 1024 // len(unit.encode()) + 1))[: kb * 1024]


@pytest.mark.parametrize('unit', HOSTILE_UNITS)
def test_stage0_cost_per_kb_does_not_grow_with_the_turn(unit: str) -> None:
    # Given a run of one hostile unit at 2 KB and at 16 KB
    small, large = _sized(unit, SMALL_KB), _sized(unit, LARGE_KB)
    # When stage 0 reads both
    per_kb_small = _cpu_seconds(small) / SMALL_KB
    per_kb_large = _cpu_seconds(large) / LARGE_KB
    # Then the cost per KB stays flat (quadratic work would multiply it by ~8)
    assert per_kb_large <= MAX_GROWTH * per_kb_small, f'{unit!r}: {per_kb_small * 1000:.2f} → {per_kb_large * 1000:.2f} ms per KB'
