"""How many rows of a context's table hold a query term (and how many rows the table has), remembered for a minute
per process.

The lexical lists search for a term in more than ``df_cap`` rows only together with the other common terms, and for a
term in half the table's rows or more not at all: it scores 0 (retrieval_store.plan_terms). Probing that costs one
full-text search per term and table, more than the lists themselves (``bench/query_stages.py``), while the same
words (speaker names, "what", "when") come back in nearly every question. A stale count only decides how a term is
searched for: a term that grew common since is searched for alone one more minute (slower, never wrong), one that was
deleted away (or whose table doubled since) is searched for only with the other common terms, or not at all, for at
most that long; visibility is applied by the lists.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable

from agent_memory.tuning import knobs

Key = tuple[str, str]  # table, term


class TermFrequencies:
    def __init__(self, ttl: float | None = None, max_entries: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        tuned = knobs()
        self.ttl = tuned.term_counts_ttl_seconds if ttl is None else ttl
        self.max_entries = tuned.term_counts_max_entries if max_entries is None else max_entries
        self.clock = clock
        self._counts: OrderedDict[Key, tuple[int, float]] = OrderedDict()
        self._lock = threading.Lock()

    def known(self, keys: Iterable[Key]) -> dict[Key, int]:
        """The counts still fresh among ``keys``."""
        now, found = self.clock(), {}
        with self._lock:
            for key in keys:
                entry = self._counts.get(key)
                if entry is not None and entry[1] > now:
                    found[key] = entry[0]
                    self._counts.move_to_end(key)
        return found

    def remember(self, counts: dict[Key, int]) -> None:
        expires = self.clock() + self.ttl
        with self._lock:
            for key, count in counts.items():
                self._counts[key] = (count, expires)
                self._counts.move_to_end(key)
            while len(self._counts) > self.max_entries:
                self._counts.popitem(last=False)


_PER_STORE: weakref.WeakKeyDictionary[object, TermFrequencies] = weakref.WeakKeyDictionary()
_PER_STORE_LOCK = threading.Lock()


def frequencies_of(store: object) -> TermFrequencies:
    """The counts of one context's store (services keep one store per context; they go when it goes)."""
    with _PER_STORE_LOCK:
        found = _PER_STORE.get(store)
        if found is None:
            found = _PER_STORE[store] = TermFrequencies()
        return found
