"""Which of the tables a process holds each design of the local-search benches searches here (``bench/local_vectors.py``,
``bench/local_search_scale.py``), so that the designs alternate question by question on the rows one warm-up read."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from agent_memory.db.local_vectors import LocalVectors
from agent_memory.tuning import Tuning

SHIPPED = Tuning()


def _as_shipped(held: LocalVectors, found: dict[str, bool], entities: bool = True) -> dict[str, bool]:
    """The default limits: a table over ``local_vectors_max_rows`` is searched by its texts only."""
    sizes = held.sizes()
    return {t: v and sizes.get(t, 0) <= SHIPPED.local_vectors_max_rows for t, v in found.items() if entities or t != 'entity'}


def _vectors_up_to(rows: int) -> Callable[[LocalVectors, dict[str, bool]], dict[str, bool]]:
    """A lower vector limit: tables over ``rows`` are searched by their texts only."""
    return lambda held, found: {t: v and held.sizes().get(t, 0) <= rows for t, v in found.items()}


SEARCHED_HERE: dict[str, Callable[[LocalVectors, dict[str, bool]], dict[str, bool]]] = {
    'vectors up to 10k here': _vectors_up_to(10_000),
    'text here': lambda held, found: dict.fromkeys(found, False),  # the held rows' vectors, if read, are not used
    'as shipped': _as_shipped,
    'entities in the database': lambda held, found: _as_shipped(held, found, entities=False),  # Session 8's design
}


@contextlib.contextmanager
def searched_here(design: str) -> Iterator[None]:
    """``LocalVectors.ready`` narrowed to what ``design`` searches here (``SEARCHED_HERE``; other designs: unchanged)."""
    ready, narrowed = LocalVectors.ready, SEARCHED_HERE.get(design)
    if narrowed is not None:
        LocalVectors.ready = lambda self, *a, **k: narrowed(self, ready(self, *a, **k))  # type: ignore[method-assign]
    try:
        yield
    finally:
        LocalVectors.ready = ready  # type: ignore[method-assign]
