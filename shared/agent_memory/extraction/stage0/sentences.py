"""Where a chat turn's sentences end: sentencex (a maintained Rust splitter) with the corrections chat text needs.

Chosen on hand-split chat turns against other libraries and a hand regex (``bench/data/sentences/``): it splits the
most turns exactly and never cuts inside an abbreviation, an initial, a decimal, an e-mail address or a URL, where the
regex did ("St. | Mary's Hospital").

1. The turn goes to the library in windows of at most ``WINDOW`` characters cut at a newline or a space, with long
   runs without spaces defused (``_defuse``): the library is quadratic inside a run of terminators or quotes, and
   both keep the worst case linear in the turn (``tests/unit/test_stage0_linear_time.py``).
2. A newline always ends a sentence.
3. Cuts the library makes in the wrong place are undone: after a title or an initial ("Dr. | Who", "J. | R. Smith"),
   after a list marker, a bare "..." or emoji, before a digit after a short word ("Rte. | 9"), and in a turn that uses
   capitals before a lowercase word after a full stop ("Intl. | school").
   The cuts the library misses after a lowercase word before a capital ("said no. | Swimming now", "bare with me. |
   I'm Augustus") are made.
4. In a turn typed without capitals, ". ! ?" and then a lowercase word ends a sentence ("ok. i moved. lol"), except
   after a known abbreviation, a single letter or a dotted acronym.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import sentencex

WINDOW = 8_192
_TITLES = 'Dr|Mr|Mrs|Ms|Mx|Prof|Rev|Fr|Sgt|Cpl|Capt|Lt|Col|Gen|Maj|Adm|Gov|Sen|Rep|Pres|Hon|Mt|Ft|Messrs'
_ABBREVIATIONS = (
    f'{_TITLES}|St|Ave|Rd|Blvd|Jr|Sr|Ltd|Inc|Co|Corp|Bros|Dept|Univ|Assn|Est|approx|vs|etc|incl|esp|cf|ca|'
    'No|Nos|Vol|Fig|Ch|Sec|Art|Pt|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|'
    'Mon|Tue|Tues|Wed|Thu|Thur|Thurs|Fri|Sat|Sun|avg|min|max|ext|misc|tel|dept'
)
_AFTER_TITLE = re.compile(rf'(?:^|[\s(\["\'])(?:{_TITLES}|[A-Z])\.$')  # "Dr." or "J." closing the previous piece
_AFTER_WORD_DOT = re.compile(r"(?:^|[\s(\[\"'])([A-Za-z]+)\.$|(?:[A-Za-z]\.){2,}$")  # "Intl." "avg." "e.g." "U.S."
_MARKER_ONLY = re.compile(r'(?:\d{1,3}|[A-Za-z])[.)]|\W+')  # "1." "b)" "..." "🎉🎉"
_IS_ABBREVIATION = re.compile(rf'(?i:{_ABBREVIATIONS})|[A-Za-z]')
_LOWER_START = re.compile(r"(?<![.\w'])([\w']+)([.!?]+)\s+(?=([a-z]+(?:'[a-z]+)?))")
_I_WORDS = frozenset({'i', "i'm", "i've", "i'll", "i'd", 'im', 'ive'})
# "my knees said no. Swimming now", "bare with me. I'm Augustus": a lowercase word, a full stop, a capital
_MISSED_STOP = re.compile(r"(?<![\w.'-])([a-z]{2,})(\.|[!?]+)\s+(?=[A-Z])")
_LONG_RUN = re.compile(r'\S{64,}')
_STOPS = str.maketrans('.!?…\'"‘’“”', '__________')


def split_sentences(text: str, caseless: bool = False) -> list[str]:
    """The sentences of a turn, in order, each stripped. ``caseless``: the speaker typed no capital letter at all (the
    turn may have been given some since, e.g. "i" → "I"), so a lowercase word may open a sentence."""
    return [text[a:b] for a, b in sentence_spans(text, cased=not caseless)]


def sentence_spans(text: str, cased: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for base, piece in _pieces(text):
        for start, end in _library_spans(piece):
            for a, b in _lines(text, base + start, base + end):
                a, b = _strip(text, a, b)
                if a >= b:
                    continue
                if spans and _rejoins(text, spans[-1], a, cased):
                    spans[-1] = (spans[-1][0], b)
                else:
                    spans.append((a, b))
    out: list[tuple[int, int]] = []
    for a, b in spans:
        for cut in sorted({*_lowercase_cuts(text, a, b, cased), *_missed_cuts(text, a, b)}):
            out.append(_strip(text, a, cut))
            a = cut
        out.append(_strip(text, a, b))
    return [s for s in out if s[0] < s[1]]


def _library_spans(piece: str) -> list[tuple[int, int]]:
    return [(int(b['start_index']), int(b['end_index'])) for b in sentencex.get_sentence_boundaries('en', _defuse(piece))]


def _rejoins(text: str, previous: tuple[int, int], start: int, cased: bool) -> bool:
    """Whether the library's cut before ``start`` was wrong (the previous piece ends in a title, a marker, …)."""
    pa, pb = previous
    if '\n' in text[pb:start]:
        return False
    tail, following = text[max(pa, pb - 16) : pb], text[start : start + 1]  # bounded work per cut
    if pb - pa <= 16 and _MARKER_ONLY.fullmatch(tail):
        return True
    if following.isalnum() and _AFTER_TITLE.search(tail):
        return True
    m = _AFTER_WORD_DOT.search(tail)
    if not m:
        return False
    word = m.group(1)  # None for a dotted acronym
    if following in ',;:)' or (following.isdigit() and word is not None and (len(word) <= 5 or _IS_ABBREVIATION.fullmatch(word))):
        return True
    return following.islower() and (cased or word is None or _IS_ABBREVIATION.fullmatch(word) is not None)


def _lowercase_cuts(text: str, a: int, b: int, cased: bool) -> Iterator[int]:
    for m in _LOWER_START.finditer(text, a, b):
        word, stop, following = m.groups()
        if stop.startswith('..'):
            continue  # "so... yeah"
        if cased and following not in _I_WORDS and not _ends_a_sentence(word, stop):
            continue  # "Intl. school": in cased text a lowercase word after a short word continues the sentence
        if stop == '.' and (_IS_ABBREVIATION.fullmatch(word) or word.isdigit()):
            continue  # "dr. fox", "approx. two"
        yield m.start(3)


def is_abbreviation(word: str) -> bool:
    """ "Dr", "St", "J", "U.N" (the word before its full stop): a title, an initial, a known abbreviation or an acronym."""
    return _IS_ABBREVIATION.fullmatch(word) is not None or re.fullmatch(r'(?:[A-Za-z]\.)+[A-Za-z]', word) is not None


def _missed_cuts(text: str, a: int, b: int) -> Iterator[int]:
    """Cuts the library misses: after a lowercase word that is no abbreviation, before a capital ("No." before a number
    is an abbreviation, before a word it is an answer)."""
    for m in _MISSED_STOP.finditer(text, a, b):
        if m.group(2) != '.' or m.group(1) == 'no' or not is_abbreviation(m.group(1)):
            yield m.end()


def _ends_a_sentence(word: str, stop: str) -> bool:
    """In a turn with capitals, whether "word." before a lowercase word still ends a sentence: chat starts sentences in
    lowercase ("live in Dunmarsh. flatmate's Ines"), but never after an abbreviation or a short capitalised word."""
    if stop != '.':
        return True  # "!" and "?" end sentences
    if _IS_ABBREVIATION.fullmatch(word) or word.isdigit() or len(word) < 3:
        return False
    return word.islower() or len(word) > 4


def _pieces(text: str) -> Iterator[tuple[int, str]]:
    """Windows of at most ``WINDOW`` characters, cut after a newline if there is one, else after a space."""
    start, n = 0, len(text)
    while n - start > WINDOW:
        lo, hi = start + WINDOW // 2, start + WINDOW
        cut = text.rfind('\n', lo, hi)
        if cut < 0:
            cut = text.rfind(' ', lo, hi)
        cut = cut + 1 if cut >= 0 else hi
        yield start, text[start:cut]
        start = cut
    yield start, text[start:]


def _lines(text: str, a: int, b: int) -> Iterator[tuple[int, int]]:
    while (newline := text.find('\n', a, b)) >= 0:
        yield a, newline
        a = newline + 1
    yield a, b


def _defuse(piece: str) -> str:
    """In runs of 64+ characters without a space (URLs, garbage: no real sentence ends there) mask the inner
    terminators and quotes and keep at most three of a trailing run of terminators; same length, so the library's
    offsets still index the original text."""

    def masked(m: re.Match[str]) -> str:
        run = m.group(0)
        head = run.rstrip('.!?…')
        end = run[len(head) :]
        return head.translate(_STOPS) + end[:3] + ' ' * max(0, len(end) - 3)

    return _LONG_RUN.sub(masked, piece)


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b
