"""LoCoMo conversations as the benchmark reads them, and the two baselines computed over the same turn texts.

The data set (CC BY-NC 4.0, evaluation only) is read from outside the repository; nothing of it is copied here.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

CATEGORIES = {1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop'}
_EVIDENCE = re.compile(r'D:?(\d+):(\d+)')
_TOKEN = re.compile(r'[a-z0-9]+')
# The common English stopword list (NLTK's), as the baseline in the issue specifies.
STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself
    it its itself they them their theirs themselves what which who whom this that these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of at by for with about
    against between into through during before after above below to from up down in out on off over under again further
    then once here there when where why how all any both each few more most other some such no nor not only own same so
    than too very s t can will just don should now d ll m o re ve y""".split()  # noqa: SIM905
)


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str  # "Speaker: text", as ingested


@dataclass(frozen=True)
class Session:
    number: int
    spoken_at: dt.datetime
    turns: list[Turn]


@dataclass(frozen=True)
class Question:
    text: str
    category: int
    evidence: frozenset[str]


@dataclass(frozen=True)
class Conversation:
    index: int
    sample_id: str
    sessions: list[Session]
    questions: list[Question]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


def default_data_path(root: Path) -> Path:
    """``../shared/data/locomo/locomo-dev.json`` beside the repository (a worktree may sit one level deeper)."""
    for parent in root.parents:
        candidate = parent / 'shared' / 'data' / 'locomo' / 'locomo-dev.json'
        if candidate.exists():
            return candidate
    return root.parent / 'shared' / 'data' / 'locomo' / 'locomo-dev.json'


def spoken_time(raw: str) -> dt.datetime:
    """ "1:56 pm on 8 May, 2023" → an aware UTC datetime."""
    return dt.datetime.strptime(raw.strip(), '%I:%M %p on %d %B, %Y').replace(tzinfo=dt.UTC)


def load(path: Path, indices: list[int], categories: Collection[int] = tuple(CATEGORIES)) -> list[Conversation]:
    """The conversations at ``indices`` with their questions of ``categories`` (5, adversarial, is left out unless asked)."""
    raw = json.loads(path.read_text())
    return [_conversation(i, raw[i], categories) for i in indices]


def _conversation(index: int, raw: dict[str, object], categories: Collection[int]) -> Conversation:
    conv = raw['conversation']
    assert isinstance(conv, dict)
    numbers = sorted(int(k.split('_')[1]) for k in conv if re.fullmatch(r'session_\d+', k))
    dated = [(n, spoken_time(conv[f'session_{n}_date_time'])) for n in numbers if conv[f'session_{n}']]
    sessions = [Session(n, at, [_turn(t) for t in conv[f'session_{n}']]) for n, at in dated]
    known = {t.dia_id for s in sessions for t in s.turns}
    questions = []
    qa = raw['qa']
    assert isinstance(qa, list)
    for q in qa:
        if q['category'] not in categories:
            continue
        evidence = frozenset(f'D{a}:{b}' for e in q.get('evidence', []) for a, b in _EVIDENCE.findall(e)) & known
        if evidence:
            questions.append(Question(q['question'], q['category'], evidence))
    return Conversation(index, str(raw['sample_id']), sessions, questions)


def _turn(raw: dict[str, str]) -> Turn:
    return Turn(raw['dia_id'], raw['speaker'], f'{raw["speaker"]}: {raw["text"]}')


def tokens(text: str) -> list[str]:
    return [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]


class Okapi:
    """Okapi BM25 (k1 1.5, b 0.75) over lowercase word tokens without English stopwords."""

    def __init__(self, docs: list[str], k1: float = 1.5, b: float = 0.75) -> None:
        self.docs = [Counter(tokens(d)) for d in docs]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(1, len(self.docs))
        df = Counter(w for d in self.docs for w in d)
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - f + 0.5) / (f + 0.5)) for w, f in df.items()}
        self.k1, self.b = k1, b

    def top(self, query: str, k: int) -> list[int]:
        terms = set(tokens(query))
        scores = []
        for i, doc in enumerate(self.docs):
            norm = self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
            score = sum(self.idf[w] * doc[w] * (self.k1 + 1) / (doc[w] + norm) for w in terms if w in doc)
            if score > 0:
                scores.append((score, i))
        return [i for _, i in sorted(scores, key=lambda s: (-s[0], s[1]))[:k]]
