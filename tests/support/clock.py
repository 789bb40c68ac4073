"""A virtual clock to stand in for the ``time`` module where code waits: nothing sleeps, time moves only when asked."""

from __future__ import annotations


class VirtualTime:
    """``monotonic()`` and ``perf_counter()`` read virtual seconds; ``sleep(s)`` advances them at once and records the nap."""

    def __init__(self, start: float = 1_000.0) -> None:
        self.now = start
        self.naps: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def perf_counter(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, seconds
        self.naps.append(seconds)
        self.now += seconds
