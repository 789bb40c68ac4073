"""Stage-0 extraction quality over the labelled corpus: precision / recall / F1 per case family and overall, per split.

The corpus and the matching rule live in ``tests/extraction_corpus`` (README there). Splits: ``dev`` (the rules were
developed on it), ``holdout`` (used once, then for fixes), ``blind`` (never tuned on: the honest number), ``blind2``
(other registers; tuned on since issue 11), ``blind3`` (other registers, never tuned on: the honest number for them),
``blind4`` (other registers, labelled by a developer who never read the extractor; never tuned on).

Run: ``PYTHONPATH=shared .venv/bin/python bench/extraction_quality.py [--split blind] [--errors] [--repeat 20]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / 'shared')]

from agent_memory.extraction.deterministic import extract  # noqa: E402
from tests.extraction_corpus.scoring import FAMILIES, SPLITS, Report, Session, context_for, load_corpus, score  # noqa: E402


def table(title: str, report: Report) -> str:
    lines = [title, f'{"family":<20} {"tp":>4} {"fp":>4} {"fn":>4} {"precision":>10} {"recall":>7} {"f1":>6}']
    rows = [(f, report.by_family[f]) for f in FAMILIES if f in report.by_family]
    rows.append(('OVERALL', report.overall))
    for name, t in rows:
        if not (t.tp or t.fp or t.fn):
            lines.append(f'{name:<20} {"-":>4} {"-":>4} {"-":>4} {"(no items)":>10}')
            continue
        lines.append(f'{name:<20} {t.tp:>4} {t.fp:>4} {t.fn:>4} {t.precision:>10.3f} {t.recall:>7.3f} {t.f1:>6.3f}')
    negatives = report.negative_turns
    lines.append(f'turns: {len(report.outcomes)}; negative turns with nothing spurious: {report.clean_negative_turns}/{len(negatives)}')
    return '\n'.join(lines)


def timing(sessions: list[Session], repeat: int) -> tuple[float, float]:
    """Mean and p95 microseconds per turn (contexts built outside the timed region)."""
    work = [(turn.text, context_for(s, turn)) for s in sessions for turn in s.turns]
    for text, ctx in work:
        extract(text, ctx)  # warm-up: regex compilation
    samples: list[float] = []
    for _ in range(repeat):
        for text, ctx in work:
            start = time.perf_counter()
            extract(text, ctx)
            samples.append((time.perf_counter() - start) * 1e6)
    samples.sort()
    return statistics.fmean(samples), samples[int(len(samples) * 0.95) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--split', choices=SPLITS, action='append', help='only these splits (default: each, then all)')
    parser.add_argument('--errors', action='store_true', help='list every missed and spurious item')
    parser.add_argument('--repeat', type=int, default=20, help='timing passes over the corpus')
    args = parser.parse_args()

    splits = tuple(args.split or SPLITS)
    sessions = load_corpus(splits)
    for split in splits:
        print(table(f'\n== split: {split}', score(extract, [s for s in sessions if s.split == split])))
    combined = score(extract, sessions)
    if len(splits) > 1:
        print(table(f'\n== all splits ({", ".join(splits)})', combined))
    mean, p95 = timing(sessions, args.repeat)
    print(f'\nextraction time per turn: mean {mean:.0f} µs, p95 {p95:.0f} µs ({len(combined.outcomes)} turns × {args.repeat})')
    if args.errors:
        print('\n'.join(['', 'errors:', *combined.errors()]))


if __name__ == '__main__':
    main()
