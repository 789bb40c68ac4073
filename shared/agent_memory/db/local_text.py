"""Passage and fact texts held in the process and ranked by BM25 there (docs/architecture.md, "Local text search").

The rows are the ones ``local_vectors`` holds, kept exact by the same looks; each text is analysed by the database
(``search::analyze`` with the full-text indexes' analyzer), so its tokens are the index's. Scores use the formula
``lexical_score`` computes in the query (the engine's own, ``Scorer::compute_bm25_score``) with the held rows' counts:
a word is present in a row when all its tokens are, weighed by its first token's count, and a branch of several words
scores only in rows holding all of them. The engine's list costs per matching row, or per row of the table and branch
(``lexical_score``), and was a hybrid query's most expensive statement; here a question costs a few dictionary reads
per matching row, and the database reads only the best rows, with the request's filter.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Sequence
from threading import Lock

from agent_memory.db.lexical_score import K1, B, idf

Word = tuple[str, ...]  # a query word's tokens, as the analyzer gives them
Plan = Callable[[dict[str, int], int], Sequence[Sequence[str]]]  # (rows holding each word, rows) -> branches of words
REMEMBERED_CHARS = 64  # longer query words are analysed each time (the memo stays ~20,000 × 64 characters at most)


class Postings:
    """One table's analysed texts: token → {key: count}, and each key's length in tokens."""

    def __init__(self) -> None:
        self._postings: dict[str, dict[str, int]] = {}
        self._lengths: dict[str, int] = {}
        self._tokens: dict[str, tuple[str, ...]] = {}  # each key's distinct tokens, to drop it
        self._total = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def __contains__(self, key: object) -> bool:
        return key in self._lengths

    def put(self, key: str, tokens: Sequence[str]) -> None:
        self.drop([key])
        counts = Counter(tokens)
        for token, count in counts.items():
            self._postings.setdefault(token, {})[key] = count
        self._lengths[key] = len(tokens)
        self._tokens[key] = tuple(counts)
        self._total += len(tokens)

    def drop(self, keys: Iterable[str]) -> None:
        for key in keys:
            length = self._lengths.pop(key, None)
            if length is None:
                continue
            self._total -= length
            for token in self._tokens.pop(key):
                holders = self._postings[token]
                del holders[key]
                if not holders:
                    del self._postings[token]

    def holding(self, word: Word) -> dict[str, int]:
        """The keys whose text holds every token of ``word``, with the count of its first token."""
        if not word:
            return {}
        first = self._postings.get(word[0], {})
        rest = [self._postings.get(token, {}) for token in word[1:]]
        return {key: count for key, count in first.items() if all(key in holders for holders in rest)}

    def search(self, words: dict[str, Word], plan: Plan, k: int | None = None) -> list[tuple[str, float]]:
        """The ``k`` best keys (None: every matching key) by BM25 over the branches ``plan`` makes of ``words`` from
        their document frequencies and the row count (each branch ORed with the others, its words ANDed), best first;
        keys that match only words scoring 0 (in half the rows or more) come after, as the engine returns them. Equal
        scores go in key order (the engine's order among them is arbitrary). Each word's holders are found once, for
        the plan and the scores."""
        holding = {word: self.holding(tokens) for word, tokens in words.items()}
        branches = plan({word: len(found) for word, found in holding.items()}, len(self._lengths))
        return self._ranked([[holding[word] for word in branch] for branch in branches], k)

    def _ranked(self, branches: Sequence[Sequence[dict[str, int]]], k: int | None) -> list[tuple[str, float]]:
        """``search`` over branches whose words are given as their holders (``holding``)."""
        rows = len(self._lengths)
        if not rows or (k is not None and k <= 0):
            return []
        mean_length = max(self._total / rows, 1e-9)
        scores: dict[str, float] = {}
        for holders in branches:
            if not holders or not all(holders):
                continue
            common = set(holders[0]).intersection(*holders[1:])
            weights = [idf(len(found), rows) for found in holders]
            for key in common:
                norm = K1 * (1 - B + B * self._lengths[key] / mean_length)
                score = 0.0
                for found, weight in zip(holders, weights, strict=True):
                    tf = 1 + math.log(found[key])
                    score += weight * (K1 + 1) * tf / (tf + norm)
                scores[key] = scores.get(key, 0.0) + score
        if k is None or k >= len(scores):
            return sorted(scores.items(), key=_best_first)
        return heapq.nsmallest(k, scores.items(), key=_best_first)  # a common word's thousands of rows: no full sort


def _best_first(item: tuple[str, float]) -> tuple[float, str]:
    return -item[1], item[0]


class Analysed:
    """Query words as the full-text analyzer splits them, remembered per process (least recently used out)."""

    def __init__(self, max_entries: int = 20_000) -> None:
        self.max_entries = max_entries
        self._words: OrderedDict[str, Word] = OrderedDict()
        self._lock = Lock()

    def known(self, words: Iterable[str]) -> dict[str, Word]:
        with self._lock:
            found = {word: self._words[word] for word in words if word in self._words}
            for word in found:
                self._words.move_to_end(word)
            return found

    def remember(self, analysed: dict[str, Word]) -> None:
        with self._lock:
            self._words.update({word: tokens for word, tokens in analysed.items() if len(word) <= REMEMBERED_CHARS})
            while len(self._words) > self.max_entries:
                self._words.popitem(last=False)


ANALYSED = Analysed()
