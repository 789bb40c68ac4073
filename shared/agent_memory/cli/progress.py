"""A progress bar on stderr: redrawn at most ten times a second, and once more, with a line break, when done."""

from __future__ import annotations

import sys
import time
from typing import TextIO

WIDTH = 30
REDRAW_SECONDS = 0.1


class Progress:
    def __init__(self, total: int, unit: str, label: str = '', out: TextIO | None = None) -> None:
        self.total, self.unit, self.label = total, unit, label
        self.done = 0
        self.note = ''
        self._out = out or sys.stderr
        self._started = time.monotonic()
        self._drawn = 0.0
        self._shown: tuple[int, str] | None = None  # what the last drawing showed
        self._finished = False
        self._draw()

    def advance(self, count: int = 1, note: str | None = None) -> None:
        self.set(self.done + count, note)

    def set(self, done: int, note: str | None = None) -> None:
        self.done = done
        if note is not None:
            self.note = note
        if time.monotonic() - self._drawn >= REDRAW_SECONDS:
            self._draw()

    def finish(self) -> None:
        if not self._finished:
            self._finished = True
            if self._shown == (self.done, self.note):
                print(file=self._out, flush=True)  # the bar already shows the end: only end its line
            else:
                self._draw(final=True)

    def _draw(self, final: bool = False) -> None:
        self._drawn = time.monotonic()
        self._shown = (self.done, self.note)
        filled = WIDTH * min(self.done, self.total) // max(self.total, 1)
        rate = self.done / max(self._drawn - self._started, 1e-9)
        label = f'{self.label} ' if self.label else ''
        note = f'  {self.note}' if self.note else ''
        line = f'{label}[{"#" * filled}{"." * (WIDTH - filled)}] {self.done}/{self.total} {self.unit}  {rate:,.0f}/s{note}'
        print(f'\r{line}', end='\n' if final else '', file=self._out, flush=True)
