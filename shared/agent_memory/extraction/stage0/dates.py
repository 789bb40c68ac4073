"""Time phrases: find one in a clause and resolve it against the turn's spoken time (``observed_at``).

Conventions: a period ("last week", "next month", "in April") resolves to its first day; "next/last <weekday>" to
the nearest such day after/before the turn; a bare weekday or month-day to the nearest one in the clause's tense.
Vague phrases ("a while ago", "soon", "back when …") are returned with no date so the caller can flag them.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

Tense = Literal['past', 'present', 'future']
Relation = Literal['at', 'since', 'until']

MONTHS = (
    {name: i for i, name in enumerate(calendar.month_name) if name}
    | {name: i for i, name in enumerate(calendar.month_abbr) if name}
    | {'Sept': 9}
)
WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBERS = {
    'a': 1,
    'an': 1,
    'one': 1,
    'two': 2,
    'three': 3,
    'four': 4,
    'five': 5,
    'six': 6,
    'seven': 7,
    'eight': 8,
    'nine': 9,
    'ten': 10,
    'eleven': 11,
    'twelve': 12,
    'a couple of': 2,
    'a couple': 2,
    'couple of': 2,
}
_NUM = r'(?P<n>\d{1,3}|a couple of|a couple|couple of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)'
_UNIT = r'(?P<unit>day|week|month|year|fortnight)s?'
_MONTH = r'(?P<month>' + '|'.join(sorted((re.escape(m) for m in MONTHS), key=len, reverse=True)) + r')\.?'
_WEEKDAY = r'(?P<weekday>monday|tuesday|wednesday|thursday|friday|saturday|sunday)s?'
_DAY = r'(?P<day>\d{1,2})(?:st|nd|rd|th)?'
_YEAR = r'(?P<year>(?:19|20)\d{2})'

_VAGUE_PHRASES = (
    r'\b(?:(?:a (?:little |short |good |long )?|quite a )?while (?:ago|back)|a bit (?:ago|back)|some time (?:ago|back)|'
    r'a (?:long )?time ago|(?:not (?:so |too |that )?)?long ago|(?:many |some )?(?:ages|years|months|weeks) (?:ago|back)|way back when|'
    r'a few (?:days|weeks|months|years) (?:ago|back)|several (?:days|weeks|months|years) (?:ago|back)|(?:the )?other day|recently|'
    r'lately|someday|some day|one day|one of these days|soon|sooner or later|before long|any day now|sometime|at some (?:point|stage)|'
    r'eventually|down the line|in due course|in the (?:near |distant )?future|back in the day|growing up|in those days|in my youth|'
    r'as an? (?:kid|child|teenager|teen|youngster)|'
    r'(?:in |during |over )?(?:the |this |last |next )?(?:spring|summer|autumn|winter)|(?:the |this |last |next )fall|'
    r'(?:(?:right|just|shortly|soon|not long|long) )?(?:after|before|during) (?:the |my |our |his |her |their )?'
    r'(?:wedding|move|pandemic|lockdown|divorce|funeral|graduation|surgery|accident|holidays|launch|merger|reorg|layoffs?|'
    r'election|breakup|promotion|college|university|uni|high school|school|internship|birth|war|crash|acquisition|ipo)|'
    r'when (?:the |my |our )?(?:kids?|children|baby|son|daughter) (?:was|were) (?:born|little|small|young)|'
    r'back when (?:i|we) (?:was|were) (?:a |an |in |at )?\w+|when (?:i|we) (?:was|were) (?:young|younger|little|a kid|a child|kids|'
    r'children|a student|students|in school|at school|in college|at university))\b'
)
VAGUE = re.compile(_VAGUE_PHRASES, re.IGNORECASE)
# The same phrases matched in a lowercased clause: without IGNORECASE each alternative is skipped on its first letter.
_VAGUE_LOWER = re.compile(_VAGUE_PHRASES)


# A stretch of the speaker's past rather than a point in it: what they did then was a habit, not one event.
_HABITUAL = re.compile(
    r'^(?:back in the day|back when|way back when|growing up|in those days|in my youth|as an? |when (?:i|we) (?:was|were))', re.I
)


@dataclass(frozen=True)
class TimeRef:
    phrase: str
    start: int
    end: int
    relation: Relation
    date: dt.date | None  # None: a vague reference that cannot be resolved

    @property
    def vague(self) -> bool:
        return self.date is None

    @property
    def habitual(self) -> bool:
        """ "Back in the day I played bass": a period of the past, so what was done in it is a habit, not a dated event."""
        return self.vague and bool(_HABITUAL.match(self.phrase))


Resolver = Callable[[re.Match[str], dt.date, Tense], dt.date | None]


def _shift(day: dt.date, n: int, unit: str) -> dt.date:
    if unit == 'day':
        return day + dt.timedelta(days=n)
    if unit in ('week', 'fortnight'):
        return day + dt.timedelta(weeks=n * (2 if unit == 'fortnight' else 1))
    months = day.month - 1 + n * (12 if unit == 'year' else 1)
    year, month = day.year + months // 12, months % 12 + 1
    return dt.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _period_start(day: dt.date, unit: str, offset: int) -> dt.date:
    if unit == 'week':
        return day - dt.timedelta(days=day.weekday()) + dt.timedelta(weeks=offset)
    if unit == 'month':
        return _shift(day.replace(day=1), offset, 'month')
    return dt.date(day.year + offset, 1, 1)


def _count(m: re.Match[str]) -> int:
    raw = m.group('n').lower()
    return int(raw) if raw.isdigit() else _NUMBERS[raw]


def _weekday(m: re.Match[str], today: dt.date, tense: Tense) -> dt.date:
    target = WEEKDAYS[m.group('weekday').lower().rstrip('s')]
    which = (m.groupdict().get('which') or '').lower()
    ahead = (target - today.weekday()) % 7
    if which == 'last' or (not which and tense == 'past'):
        return today - dt.timedelta(days=(today.weekday() - target) % 7 or 7)
    if which == 'this':
        return today + dt.timedelta(days=ahead)
    return today + dt.timedelta(days=ahead or 7)


def _calendar_day(m: re.Match[str], today: dt.date, tense: Tense) -> dt.date | None:
    month = MONTHS[m.group('month').rstrip('.').capitalize()]
    day = int(m.groupdict().get('day') or 1)
    year = int(m.group('year')) if m.groupdict().get('year') else today.year
    if day > calendar.monthrange(year, month)[1]:
        return None
    resolved = dt.date(year, month, day)
    if not m.groupdict().get('year'):
        if tense == 'past' and resolved > today:
            resolved = resolved.replace(year=year - 1)
        elif tense == 'future' and resolved < today:
            resolved = resolved.replace(year=year + 1)
    return resolved


_RESOLVED: list[tuple[re.Pattern[str], Resolver]] = [
    (re.compile(r'\bthe day before yesterday\b', re.I), lambda m, d, t: d - dt.timedelta(days=2)),
    (re.compile(r'\bthe day after tomorrow\b', re.I), lambda m, d, t: d + dt.timedelta(days=2)),
    (re.compile(r'\b(?:yesterday(?: morning| afternoon| evening)?|last night)\b', re.I), lambda m, d, t: d - dt.timedelta(days=1)),
    (re.compile(r'\btomorrow(?: morning| afternoon| evening)?\b', re.I), lambda m, d, t: d + dt.timedelta(days=1)),
    (re.compile(r'\b(?:earlier )?(?:today|tonight|this (?:morning|afternoon|evening))\b', re.I), lambda m, d, t: d),
    (re.compile(rf'\b{_NUM} {_UNIT} (?:ago|back)\b', re.I), lambda m, d, t: _shift(d, -_count(m), m.group('unit').lower())),
    (re.compile(rf'\b(?:in|within) {_NUM} {_UNIT}(?: time)?\b', re.I), lambda m, d, t: _shift(d, _count(m), m.group('unit').lower())),
    (
        re.compile(r'\b(?P<which>last|next|this|past|coming) (?P<unit>week|month|year)\b', re.I),
        lambda m, d, t: _period_start(
            d, m.group('unit').lower(), {'last': -1, 'past': -1, 'next': 1, 'coming': 1}.get(m.group('which').lower(), 0)
        ),
    ),
    (re.compile(rf'\b(?:(?P<which>last|next|this|coming) )?(?:on )?{_WEEKDAY}\b', re.I), _weekday),
    (re.compile(rf'\b{_YEAR}-(?P<m>\d{{2}})-(?P<d>\d{{2}})\b'), lambda m, d, t: _iso(m)),
    (re.compile(rf'\b(?:the )?{_DAY} (?:of )?{_MONTH}(?:,? {_YEAR})?\b', re.I), _calendar_day),
    (re.compile(rf'\b{_MONTH} (?:the )?{_DAY}\b(?:,? {_YEAR})?', re.I), _calendar_day),
    (re.compile(rf'\b{_MONTH}(?: {_YEAR})?\b'), _calendar_day),  # case-sensitive: "may" and "march" are also words
    (re.compile(r'\b(?:on )?the (?P<day>\d{1,2})(?:st|nd|rd|th)\b', re.I), lambda m, d, t: _day_of_month(int(m.group('day')), d, t)),
    (re.compile(rf'\b(?:in|since|from|until) {_YEAR}\b', re.I), lambda m, d, t: dt.date(int(m.group('year')), 1, 1)),
]


def _day_of_month(day: int, today: dt.date, tense: Tense) -> dt.date | None:
    """ "on the 28th": this month's, or the neighbouring month's when the clause's tense points the other way."""
    month_start = today.replace(day=1)
    if tense == 'past' and day > today.day:
        month_start = _shift(month_start, -1, 'month')
    elif tense == 'future' and day < today.day:
        month_start = _shift(month_start, 1, 'month')
    if day > calendar.monthrange(month_start.year, month_start.month)[1]:
        return None
    return month_start.replace(day=day)


def _iso(m: re.Match[str]) -> dt.date | None:
    try:
        return dt.date(int(m.group('year')), int(m.group('m')), int(m.group('d')))
    except ValueError:
        return None


_RELATION_BEFORE = re.compile(r'(?:\b(?P<rel>since|from|starting(?: on| from)?|as of|until|till|til|through|on|in|at|by))?\s*$', re.I)
_RELATION_INSIDE = re.compile(r'(?P<rel>since|from|until)\s', re.I)
_RELATIONS: dict[str, Relation] = {
    'since': 'since',
    'from': 'since',
    'starting': 'since',
    'as of': 'since',
    'until': 'until',
    'till': 'until',
    'til': 'until',
    'through': 'until',
}


def find_time(clause: str, today: dt.date, tense: Tense) -> TimeRef | None:
    """The first time phrase in the clause (longest at the same position), with its leading preposition."""
    # Each pattern's first match is its earliest, so only that one competes; only the winner is resolved.
    candidates: list[tuple[re.Match[str], Resolver | None]] = []
    lowered = clause.lower()
    vague = (_VAGUE_LOWER, lowered) if len(lowered) == len(clause) else (VAGUE, clause)  # same offsets, or the slow way
    for pattern, resolve, text in [*((p, r, clause) for p, r in _RESOLVED), (*vague[:1], None, vague[1])]:
        if first := next((m for m in pattern.finditer(text) if m.group(0).strip()), None):
            candidates.append((first, resolve))
    if not candidates:
        return None
    won, resolve = min(candidates, key=lambda c: (c[0].start(), -(c[0].end() - c[0].start())))
    start, end, date = won.start(), won.end(), resolve(won, today, tense) if resolve else None
    lead = _RELATION_BEFORE.search(clause[:start])
    rel_word = ((lead.group('rel') or '') if lead else '').lower()
    if lead and rel_word:
        start = lead.start('rel')
    elif inside := _RELATION_INSIDE.match(clause, start):  # "since 2019": the year's pattern holds its preposition
        rel_word = inside.group('rel').lower()
    relation = _RELATIONS.get(rel_word, _RELATIONS.get(rel_word.split()[0] if rel_word else '', 'at'))  # "as of", "starting on"
    return TimeRef(phrase=clause[start:end], start=start, end=end, relation=relation, date=date)


def at_midnight(day: dt.date, observed_at: dt.datetime) -> dt.datetime:
    """A resolved date as an aware datetime at the start of that day in the turn's own timezone."""
    return dt.datetime.combine(day, dt.time(), tzinfo=observed_at.tzinfo or dt.UTC)
