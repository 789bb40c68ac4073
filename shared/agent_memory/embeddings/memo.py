"""Vectors of recently embedded texts, kept per process so one text costs one model call.

A /chat call embeds its question for the cache lookup and again as the user turn's chunk, and the extraction worker
embeds a job's chunks before its turns are reconciled one by one.
The models are deterministic, so a remembered vector is the vector the model would return. Bounded
(least recently used first out) and stored as C doubles, exactly what the model returned: 2,048 texts of
384 dimensions hold about 6 MB (``array``, not numpy: plain handlers do not import numpy at cold start).
"""

from __future__ import annotations

import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Sequence

MEMO_TEXTS = 2048


class VectorMemo:
    def __init__(self, capacity: int = MEMO_TEXTS) -> None:
        self._capacity = capacity
        self._vectors: OrderedDict[str, array[float]] = OrderedDict()
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], model: Callable[[Sequence[str]], list[list[float]]]) -> list[list[float]]:
        """``model`` runs once, on the distinct texts not remembered; the result is in the order of ``texts``."""
        with self._lock:
            known = {text: self._touch(text) for text in dict.fromkeys(texts)}
        missing = [text for text, vector in known.items() if vector is None]
        if missing:
            fresh = {text: array('d', vector) for text, vector in zip(missing, model(missing), strict=True)}
            known.update(fresh)
            with self._lock:
                for text, vector in fresh.items():
                    self._vectors[text] = vector
                    self._vectors.move_to_end(text)
                while len(self._vectors) > self._capacity:
                    self._vectors.popitem(last=False)
        return [known[text].tolist() for text in texts]  # type: ignore[union-attr]

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()

    def _touch(self, text: str) -> array[float] | None:
        vector = self._vectors.get(text)
        if vector is not None:
            self._vectors.move_to_end(text)
        return vector
