"""Stage 0 on hostile turns: every case grows to each size and the time per KB is printed, so a pattern that
backtracks from every position (quadratic or worse) shows as a per-KB time that grows with the size.

Each case is one repeated unit (runs of commas, whitespace, quotes, cue words, nested parentheses, one token,
unicode, and mixes of them) cut to the size. A case whose run exceeds ``--budget`` seconds is not grown further
(its larger sizes are marked ``skipped``), so the battery stays bounded even on quadratic code.

Run: ``PYTHONPATH=shared:infra:. .venv/bin/python bench/stage0_adversarial.py [--sizes 1,4,20] [--budget 5]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from collections.abc import Callable

from agent_memory.extraction.deterministic import extract
from agent_memory.extraction.model import ExtractionContext


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda size: (unit * (size // max(1, len(unit.encode())) + 1))[:size]


def _nested_parentheses(size: int) -> str:
    half = size // 2
    return '(' * half + ')' * half


CASES: dict[str, Callable[[int], str]] = {
    'commas+space': _repeat(', '),
    'commas': _repeat(','),
    'spaces': _repeat(' '),
    'space-newline': _repeat(' \n'),
    'tabs': _repeat('\t'),
    'double quotes': _repeat('"'),
    'single quotes': _repeat("'"),
    'curly quotes': _repeat('“”'),
    'dots': _repeat('.'),
    'dot-space': _repeat('. '),
    'ellipsis': _repeat('… '),
    'dashes': _repeat('- '),
    'em dashes': _repeat('— '),
    'nested parentheses': _nested_parentheses,
    'one token a': _repeat('a'),
    'one token word': _repeat('word '),
    'capitalised words': _repeat('Acme '),
    'capital letters': _repeat('A'),
    'cue always': _repeat('always '),
    'cue please': _repeat('please '),
    'cue from now on': _repeat('from now on '),
    'cue please comma': _repeat('please, '),
    'first person': _repeat("I'm "),
    'my my': _repeat('my '),
    'and I': _repeat('and I '),
    'call me': _repeat('call me '),
    'my name is': _repeat('my name is '),
    'correction': _repeat('— well, '),
    'actually comma': _repeat(', actually '),
    'time words': _repeat('last week '),
    'ordinals': _repeat('the 1st '),
    'since on': _repeat('since on '),
    'unicode accents': _repeat('é '),
    'unicode cjk': _repeat('日本語'),
    'emoji': _repeat('🙂 '),
    'combining marks': _repeat('e\u0301'),
    'mix comma filler': _repeat('ok, so, '),
    'mix I like comma': _repeat('I like , '),
    'mix trailing please': _repeat(' , please'),
    'mix quotes commas': _repeat('", "'),
    'mix colon semicolon': _repeat(': ; '),
    'mix if comma': _repeat('if I, '),
    'mix capital comma': _repeat('Acme, '),
    'mix my key is': _repeat('my a is '),
}


def measure(text: str, repeat: int, budget: float) -> float:
    """Best of ``repeat`` runs (the machine is shared), or the first run alone when it is already over budget."""
    ctx = ExtractionContext(role='user', observed_at=dt.datetime(2026, 1, 5, tzinfo=dt.UTC))
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        extract(text, ctx)
        best = min(best, time.perf_counter() - start)
        if best > budget:
            break
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--sizes', default='1,4,20', help='turn sizes in KB, ascending')
    parser.add_argument('--budget', type=float, default=5.0, help='stop growing a case once one run takes longer (s)')
    parser.add_argument('--repeat', type=int, default=3, help='runs per size; the best is kept')
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(',')]
    print(f'{"case":<22}' + ''.join(f'{f"{s} KB ms":>12}' for s in sizes) + f'{"ms/KB @max":>12}{"growth":>8}')
    print('(growth: ms per KB at the largest size run over the size before it; ~1 is linear, ~size ratio is quadratic)')
    worst: tuple[float, str, int] = (0.0, '', 0)
    for name, build in CASES.items():
        times: list[float | None] = []
        for size in sizes:
            if times and (times[-1] is None or times[-1] > args.budget):
                times.append(None)
                continue
            times.append(measure(build(size * 1024), args.repeat, args.budget))
        ran = [(s, t) for s, t in zip(sizes, times, strict=True) if t is not None]
        per_kb = [t * 1000 / s for s, t in ran]
        growth = per_kb[-1] / per_kb[-2] if len(per_kb) > 1 and per_kb[-2] > 0 else float('nan')
        if per_kb[-1] > worst[0]:
            worst = (per_kb[-1], name, ran[-1][0])
        cells = ''.join(f'{t * 1000:>12.1f}' if t is not None else f'{"skipped":>12}' for t in times)
        print(f'{name:<22}{cells}{per_kb[-1]:>12.2f}{growth:>8.1f}')
    print(f'\nworst case: {worst[1]!r} at {worst[2]} KB: {worst[0]:.2f} ms per KB')


if __name__ == '__main__':
    main()
