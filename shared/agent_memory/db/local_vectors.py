"""Passage, fact and entity vectors held in the process and searched exactly with numpy (docs/architecture.md, "Local
vector search").

An HNSW KNN on 3.2.4 costs a fixed price per statement plus a whole-row read per neighbour, vector included; numpy ranks
a conversation's vectors exactly in a small fraction of that. A table's vectors are read once per process
(tables of at most ``local_vectors_max_rows`` rows; larger ones up to ``local_text_max_rows`` hold their texts only;
``local_vectors_budget_rows`` in all, the least recently used table out first). Before each search the database is
asked what changed since the last look, by its own clock: mirror rows written (``written_at``, context migrations 0021
and 0022) and rows deleted (``vector_gone``); every
``local_vectors_verify_seconds`` a look goes back ``local_vectors_write_lag_seconds`` (the longest a write transaction
stays open) before the last such look, so a row stamped before a look and committed after it is still seen
(``LocalVectors._look``). The vectors only rank: the caller reads the candidates with the request's filters
(``RetrievalStore``), so a row the caller may not see, or one deleted meanwhile, never leaves the database. The same
rows' analysed texts are read with their vectors and ranked by BM25 here too (``db/local_text.py``).
"""

from __future__ import annotations

import datetime as dt
import itertools
import json
import threading
import time
import weakref
from collections.abc import Collection, Container, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agent_memory.db.lexical_score import ANALYZER
from agent_memory.db.local_text import ANALYSED, Plan, Postings, Word
from agent_memory.db.records import rid
from agent_memory.tuning import Tuning, knobs

if TYPE_CHECKING:
    import numpy as np

LEAN_OF = {'attribute': 'attribute_lean', 'memory_chunk': 'memory_chunk_lean', 'entity': 'entity_lean'}  # by mirror
TEXT_OF = {'attribute': 'search_text', 'memory_chunk': 'text', 'entity': 'name'}  # each mirror's full-text field
ARRAY_KEYS = frozenset({'entity'})  # tables whose record ids are arrays (an entity's ``[type, normalised name]``)


def local_key(raw: Any) -> str:
    """A row's key as this process holds it: its record id's key, an array key as JSON."""
    return raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, separators=(',', ':'))


def record_key(table: str, key: str) -> Any:
    """The record id key of a key held here (``local_key``)."""
    return json.loads(key) if table in ARRAY_KEYS else key


class Queries(Protocol):
    def q(self, sql: str, **params: Any) -> list[Any]: ...


@dataclass
class _Vectors:
    """One table's unit vectors, row i for ``keys[i]``, and the analysed texts of all its rows (``text``: also rows
    without a vector yet). A table over ``local_vectors_max_rows`` holds its texts only (``vectors`` False): its KNN
    runs in the database."""

    dimension: int
    vectors: bool = True
    keys: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    matrix: np.ndarray = field(init=False)
    text: Postings = field(default_factory=Postings)
    looked_at: dt.datetime | None = None  # the database's time at the last look
    verified_at: dt.datetime | None = None  # ... at the last look that went back write_lag seconds before the one before
    verified: float = field(default_factory=time.monotonic)  # when that was, on this process's clock
    pending: dict[str, None] = field(default_factory=dict)  # keys still to read, in order (a chunk per look)
    # A table new to the process that holds texts only is read in key order, a chunk per look from the last key read
    # (a scan: cheaper than by ids on SurrealKV); the keys it did not meet are read by ids after it.
    scanning: bool = False
    scanned_to: Any = None  # the last mirror record the scan read
    loaded: float = field(default_factory=time.monotonic)
    used: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        import numpy as np  # only where vectors are searched: plain handlers import this module without it

        self.matrix = np.empty((64, self.dimension), dtype=np.float32)

    def __len__(self) -> int:
        return len(self.keys)

    def size(self) -> int:
        """The rows held: every row has a text, some have no vector yet."""
        return max(len(self.keys), len(self.text))

    def weight(self) -> int:
        """What the rows weigh in ``local_vectors_budget_rows``: a text counts one, a vector one (each ~1.5 KB)."""
        return len(self.keys) + len(self.text)

    def texts_only(self) -> None:
        """Stop holding vectors (the table outgrew ``local_vectors_max_rows``); the texts stay."""
        import numpy as np

        self.vectors, self.keys, self.rows = False, [], {}
        self.matrix = np.empty((0, self.dimension), dtype=np.float32)

    def forget(self, keys: Collection[str]) -> None:
        """Rows deleted from the table."""
        self.drop(keys)
        self.text.drop(keys)

    def put(self, rows: Sequence[dict[str, Any]]) -> None:
        """Add or replace rows ``{'id': record, 'embedding': [...]}``; a row without a usable vector is dropped. One
        array conversion for the whole batch."""
        import numpy as np

        usable = {local_key(row['id'].id): row.get('embedding') for row in rows}
        self.drop([key for key, vector in usable.items() if not vector or len(vector) != self.dimension])
        keys = [key for key, vector in usable.items() if vector and len(vector) == self.dimension]
        if not keys:
            return
        flat = itertools.chain.from_iterable(usable[key] or () for key in keys)
        vectors = np.fromiter(flat, dtype=np.float32, count=len(keys) * self.dimension).reshape(len(keys), self.dimension)
        norms = np.linalg.norm(vectors, axis=1)
        self.drop([key for key, norm in zip(keys, norms, strict=True) if not norm])
        keys = [key for key, norm in zip(keys, norms, strict=True) if norm]
        vectors = vectors[norms > 0] / norms[norms > 0, None]
        for key in keys:
            if key not in self.rows:
                self.rows[key] = len(self.keys)
                self.keys.append(key)
        if len(self.keys) > len(self.matrix):
            grown = np.empty((max(len(self.keys), 2 * len(self.matrix)), self.dimension), dtype=np.float32)
            grown[: len(self.matrix)] = self.matrix
            self.matrix = grown
        self.matrix[[self.rows[key] for key in keys]] = vectors

    def drop(self, keys: Collection[str]) -> None:
        """Vectors of ``keys`` gone (their texts stay: ``forget`` drops both)."""
        for key in keys:
            at = self.rows.pop(key, None)
            if at is None:
                continue
            last = len(self.keys) - 1
            if at != last:  # the last row moves into the hole
                moved = self.keys[last]
                self.keys[at], self.rows[moved] = moved, at
                self.matrix[at] = self.matrix[last]
            self.keys.pop()

    def nearest(self, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The ``k`` nearest keys and their cosine distances (1 - similarity, as ``vector::distance::knn()``)."""
        import numpy as np

        n = len(self.keys)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if not n or k <= 0 or not norm or query.shape != (self.dimension,):
            return []
        similarity = self.matrix[:n] @ (query / norm)
        top = np.argpartition(-similarity, k - 1)[:k] if k < n else np.arange(n)
        top = top[np.argsort(-similarity[top], kind='stable')]
        return [(self.keys[i], 1.0 - float(similarity[i])) for i in top]


class LocalVectors:
    """One context's vectors (``local_vectors_of``)."""

    def __init__(self, dimension: int) -> None:
        self.dimension = dimension
        self._tables: dict[str, _Vectors] = {}
        self._too_large: dict[str, float] = {}  # table -> monotonic time to count it again
        self._lock = threading.Lock()

    def ready(self, store: Queries, tables: Collection[str], words: Sequence[str] = ()) -> dict[str, bool]:
        """Bring the vectors and texts of ``tables`` up to date (at most two round trips) and return those that can be
        searched here, each with whether its vectors are held (or its texts only). A table new to the process is read
        ``local_vectors_load_rows`` rows per call (each read whole, vector included), ``local_text_load_rows`` when it
        holds texts only (a key-order scan, far cheaper a row), its keys first; until it is whole its lists run in the
        database. ``words`` not yet analysed are analysed in the same round trip (``local_text.ANALYSED``)."""
        tuned = knobs()
        vector_rows, max_rows = _row_limits(tuned)
        if max_rows <= 0:
            return {}
        now = time.monotonic()
        with self._lock:
            for table, held in list(self._tables.items()):
                if now - held.loaded > tuned.local_vectors_reload_seconds:
                    del self._tables[table]  # older than the deletions the database keeps (vector_gone)
            wanted = [t for t in tables if t in LEAN_OF and (t in self._tables or self._too_large.get(t, 0.0) <= now)]
            if not wanted:
                return {}
            self._look(store, wanted, max_rows, vector_rows, tuned, words)
            for table in wanted:
                vectors = self._tables.get(table)
                if vectors is None or vectors.size() + len(vectors.pending) > max_rows:
                    self._tables.pop(table, None)
                    self._too_large[table] = now + tuned.local_vectors_retry_seconds
                else:
                    vectors.used = now
            found = {t for t in wanted if t in self._tables}
        _registry_fit(self, found, tuned.local_vectors_budget_rows)
        with self._lock:
            return {t: self._tables[t].vectors for t in found if t in self._tables and not self._tables[t].pending}

    def nearest(self, table: str, vector: Sequence[float], k: int) -> list[tuple[str, float]]:
        with self._lock:
            vectors = self._tables.get(table)
            return vectors.nearest(vector, k) if vectors is not None else []

    def text_search(self, table: str, words: dict[str, Word], plan: Plan, k: int) -> list[tuple[str, float]] | None:
        """The ``k`` best rows by BM25 over the branches ``plan`` makes of ``words`` (``Postings.search``) and their
        scores; None when the table holds no rows (evicted since the look, or empty)."""
        with self._lock:
            vectors = self._tables.get(table)
            return vectors.text.search(words, plan, k) if vectors is not None and len(vectors.text) else None

    def rows(self) -> dict[str, int]:
        """Vectors held per table."""
        with self._lock:
            return {table: len(vectors) for table, vectors in self._tables.items()}

    def sizes(self) -> dict[str, int]:
        """Rows held per table (``_Vectors.size``)."""
        with self._lock:
            return {table: vectors.size() for table, vectors in self._tables.items()}

    def weights(self) -> dict[str, int]:
        """What each table's rows weigh in the budget (``_Vectors.weight``)."""
        with self._lock:
            return {table: vectors.weight() for table, vectors in self._tables.items()}

    def evict(self, table: str) -> int:
        with self._lock:
            vectors = self._tables.pop(table, None)
            return vectors.weight() if vectors is not None else 0

    def _look(
        self, store: Queries, tables: Sequence[str], max_rows: int, vector_rows: int, tuned: Tuning, words: Sequence[str] = ()
    ) -> None:
        """The keys of tables new to the process and the changes of known ones, then the vectors of the next keys still
        to read (new keys join them). The database's clock is read first: a row written after it is in the next look.

        A row is stamped when its statement runs and seen once its transaction commits, at most ``write_lag`` later.
        So a look lists the rows written since the last one, and every ``verify_seconds`` one goes back to ``write_lag``
        before the last such look: a row that committed late is seen then, and rows written in bulk (an import, an
        expiry sweep) are listed again at most once per ``verify_seconds``, not by every query for ``write_lag``."""
        statements, now = ['RETURN time::now();'], time.monotonic()
        params: dict[str, Any] = {}
        verifying = set()
        for table in tables:
            lean, vectors = LEAN_OF[table], self._tables.get(table)
            if vectors is None:
                statements.append(f'SELECT VALUE record::id(id) FROM {lean} LIMIT {max_rows + 1};')  # one scan, not a count first
                continue
            since = vectors.looked_at
            if now - vectors.verified >= tuned.local_vectors_verify_seconds:
                verifying.add(table)
                lag = dt.timedelta(seconds=tuned.local_vectors_write_lag_seconds)
                since = vectors.verified_at - lag if vectors.verified_at else None
            params[f'since_{table}'] = since or dt.datetime.min.replace(tzinfo=dt.UTC)
            statements.append(
                f'RETURN [(SELECT VALUE key FROM vector_gone WHERE at >= $since_{table} AND tbl = "{table}"), '
                f'(SELECT VALUE record::id(id) FROM {lean} WHERE written_at >= $since_{table})];'
            )
        known = ANALYSED.known(words)
        unknown = [word for word in dict.fromkeys(words) if word not in known]
        if unknown:
            analyses = ', '.join(f"search::analyze('{ANALYZER}', $word{i})" for i in range(len(unknown)))
            statements.append(f'RETURN [{analyses}];')
            params |= {f'word{i}': word for i, word in enumerate(unknown)}
        results = store.q('\n'.join(statements), **params)
        if unknown:
            ANALYSED.remember({word: tuple(tokens or ()) for word, tokens in zip(unknown, results.pop(), strict=True)})
        looked_at, chunks, scans = results[0], {}, []
        for table, found in zip(tables, results[1:], strict=True):
            vectors = self._tables.get(table)
            if vectors is None:
                if len(found) > max_rows:
                    continue  # too large: ``ready`` counts it again later
                vectors = self._tables[table] = _Vectors(self.dimension, len(found) <= vector_rows, verified_at=looked_at)
                vectors.pending = dict.fromkeys(local_key(key) for key in found)
                vectors.scanning = not vectors.vectors
            else:
                gone, written = found
                vectors.forget([local_key(key) for key in gone])  # deletions first: a row deleted then written again is in ``written``
                read: Container[str] = vectors.rows if vectors.vectors else vectors.text  # a text is written once
                vectors.pending |= dict.fromkeys(key for key in map(local_key, written) if key not in read)
                if table in verifying:
                    vectors.verified_at, vectors.verified = looked_at, now
                if vectors.vectors and vectors.size() + len(vectors.pending) > vector_rows:
                    vectors.texts_only()  # outgrew the vector limit: its KNN runs in the database from now on
            vectors.looked_at = looked_at
            if vectors.scanning:
                scans.append(table)
                continue
            load_rows = tuned.local_vectors_load_rows if vectors.vectors else tuned.local_text_load_rows
            chunk = list(itertools.islice(vectors.pending, load_rows))
            for key in chunk:
                del vectors.pending[key]
            if chunk:
                chunks[table] = chunk
        if chunks or scans:
            self._read(store, chunks, scans, tuned.local_text_load_rows)

    def _read(self, store: Queries, chunks: dict[str, list[str]], scans: list[str], scan_rows: int) -> None:
        """One round trip: the vectors and analysed texts of ``chunks`` (keys per table), and the next ``scan_rows``
        rows in key order of each table in ``scans``."""
        analyse = {table: f"SELECT VALUE [record::id(id), search::analyze('{ANALYZER}', {TEXT_OF[table]})]" for table in [*chunks, *scans]}
        texts = [f'{analyse[table]} FROM $texts_{table};' for table in chunks]
        params: dict[str, Any] = {
            f'texts_{table}': [rid(LEAN_OF[table], record_key(table, key)) for key in keys] for table, keys in chunks.items()
        }
        for table in scans:
            after = self._tables[table].scanned_to
            where = '' if after is None else f' WHERE id > $after_{table}'  # a table scan runs in key order
            texts.append(f'{analyse[table]} FROM {LEAN_OF[table]}{where} LIMIT {scan_rows};')
            params[f'after_{table}'] = after
        vector_keys = [(table, key) for table, keys in chunks.items() if self._tables[table].vectors for key in keys]
        params['fetch'] = [rid(table, record_key(table, key)) for table, key in vector_keys]
        fetched, *analysed = store.q(f'SELECT id, embedding FROM $fetch WHERE embedding IS NOT NONE;{"".join(texts)}', **params)
        for table, toks in zip([*chunks, *scans], analysed, strict=True):
            held = self._tables[table]
            held.put([row for row in fetched or [] if row['id'].table_name == table])
            for raw, tokens in toks or []:
                key = local_key(raw)
                held.text.put(key, tokens or [])
                held.pending.pop(key, None)  # a scanned key (a chunk's keys left the pending ones when it was cut)
            if table in scans:
                held.scanning = len(toks or []) == scan_rows
                held.scanned_to = rid(LEAN_OF[table], toks[-1][0]) if toks else held.scanned_to


# ---- every context's vectors in this process, within one budget ---------------------------------------------------

_PER_STORE: weakref.WeakKeyDictionary[object, LocalVectors] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def local_vectors_of(store: object, dimension: int) -> LocalVectors:
    """The vectors of one context's store (services keep one store per context; they go when it goes)."""
    with _LOCK:
        found = _PER_STORE.get(store)
        if found is None or found.dimension != dimension:
            found = _PER_STORE[store] = LocalVectors(dimension)
        return found


def held_local_vectors(store: object) -> LocalVectors | None:
    """The rows a search by meaning made this process hold for ``store``, if any (a search by words alone uses them)."""
    with _LOCK:
        return _PER_STORE.get(store)


def _row_limits(tuned: Tuning) -> tuple[int, int]:
    """The largest table whose vectors are held, and the largest held at all (its texts only beyond the first). A
    table weighs up to twice its rows (``_Vectors.weight``): one alone over the budget stays out."""
    vector_rows = min(tuned.local_vectors_max_rows, tuned.local_vectors_budget_rows // 2)
    text_rows = min(tuned.local_text_max_rows, tuned.local_vectors_budget_rows) if tuned.local_text else 0
    return vector_rows, max(vector_rows, text_rows)


def _registry_fit(keep: LocalVectors, tables: Collection[str], budget: int) -> None:
    """Evict the least recently used tables of any context until the rows this process holds weigh at most ``budget``
    (``_Vectors.weight``); the tables ``keep`` is about to search go last (``ready`` loads no table heavier than it)."""
    with _LOCK:
        held = [(vectors, table, rows) for vectors in list(_PER_STORE.values()) for table, rows in vectors.weights().items()]
    total = sum(rows for _, _, rows in held)
    if total <= budget:
        return

    def last_use(entry: tuple[LocalVectors, str, int]) -> tuple[bool, float]:
        vectors, table, _ = entry
        with vectors._lock:
            used = vectors._tables[table].used if table in vectors._tables else 0.0
        return (vectors is keep and table in tables, used)

    for vectors, table, _ in sorted(held, key=last_use):
        if total <= budget:
            break
        total -= vectors.evict(table)
