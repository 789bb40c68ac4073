"""Tuning knobs: the numbers that trade recall, latency and cost, in one typed object with their measured defaults.

They are code, not deployment configuration (README.md lists the ``AGENT_MEMORY_*`` settings): each
default was chosen with a benchmark (docs/architecture.md, "Decisions", names it) and changing one is a code change
that re-runs it. Modules read them through ``knobs()`` when they run, never at import, so a test changes one for its
duration (``tests/support/tuning.py``: ``tune(monkeypatch, reindex_min_new_rows=20)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType


@dataclass(frozen=True)
class Tuning:
    # -- retrieval: fusion of the ranked lists (domain/retrieval.py) -------------------------------------------------
    rrf_k: int = 60  # reciprocal-rank constant: a hit at rank r scores weight / (rrf_k + r)
    pool: int = 256  # hits kept after fusion, before the final re-scoring
    # Rows per list, also the order the lists enter fusion.
    list_limits: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({'attribute': 32, 'entity': 16, 'memory_chunk': 32}))
    # Passages found by meaning and by words count alike; an entity row ("Alice (person)") answers little by itself; a
    # fact only *about* a named entity (graph) is weak evidence, a structured tier-1 match strong evidence. Every fact
    # and entity list counts half a passage list at the same rank: facts are derived from what was said, and at equal
    # weight they took top-10 places from the passages that said it (bench/locomo_replay.py). The order among facts is
    # unchanged; tier 1 keeps its weight.
    list_weights: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({
            'vector:attribute': 0.5,
            'vector:memory_chunk': 1.0,
            'bm25:attribute': 0.35,
            'bm25:memory_chunk': 1.0,
            'vector:entity': 0.15,
            'bm25:entity': 0.15,
            'graph': 0.15,
            'tier1': 1.5,
        })
    )  # fmt: skip
    # A fact or entity less similar than this to the query is not evidence for it: it leaves the vector list before
    # ranks are counted, so a short, frequently reinforced fact cannot outrank passages on proximity alone.
    similarity_floor: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({'vector:attribute': 0.5, 'vector:entity': 0.5}))
    graph_limits: tuple[int, ...] = (32, 16, 16)  # facts taken from the seeds, then from 1-hop and 2-hop neighbours
    # Up to this many current facts of a hop's entities are all read and ordered by closeness to the query; beyond it they
    # are taken among the query's nearest facts (db/retrieval_store._seed_attributes: each read decodes a vector).
    seed_facts_exact: int = 128
    neighbour_from: int = 4  # the best passages whose adjacent turns (the question before, the reply after) join the ranking
    neighbour_share: float = 0.5  # an adjacent turn scores this share of the passage that brought it
    # A question about time ("When did …?"): a passage whose turn carries a time expression scores this many times as
    # much. A fact adds source_credit of its score to the passage it was extracted from, when both are in the pool.
    # Chosen together on LoCoMo conversations 0-2 (bench/locomo.py): each helps alone, both help most.
    dated_passage_weight: float = 2.0
    source_credit: float = 1.0
    seed_similarity: float = 0.55  # an entity this close to the query (cosine) seeds graph expansion

    # -- retrieval: the database lists (db/retrieval_store.py, db/term_frequencies.py) -------------------------------
    ef_search: int = 64  # HNSW candidate list per query (bench/retrieval.py: recall@10 against exact search)
    overfetch: float = 1.5  # KNN neighbours fetched per row kept after filtering; limit × overfetch must stay ≤ ef_search
    # Passage and fact vectors (and texts: local_text) searched in the process (db/local_vectors.py): tables of at most
    # max_rows rows hold both, larger ones up to local_text_max_rows their texts only (their KNN runs in the database; 0
    # and 0: every list runs in the database); what a process holds across contexts weighs at most budget (a row's text
    # counts 1 and its vector 1, each ~1.5 KB: 150,000 ~225 MB), least recently used table out first. A table new to a
    # process is read load_rows rows per search (each row read whole, vector included; its lists run in the database
    # until it is whole), a texts-only one local_text_load_rows by a key-order scan (far cheaper a row, so a large table
    # is whole after a few searches, bench/fresh_process.py); a larger one is counted again after retry seconds. Each
    # search looks up the changes since the last look, and every verify seconds since write_lag (the longest a write
    # transaction stays open) before the last such look; a process reads everything again after reload seconds (the
    # sweep keeps deletions a day). 20,000: 10k facts gain with texts
    # ranked here too, 100k facts lose with their vectors here but gain with their texts (bench/local_search_scale.py).
    local_vectors_max_rows: int = 20_000
    local_text_max_rows: int = 100_000
    local_vectors_budget_rows: int = 150_000
    local_vectors_load_rows: int = 500
    local_text_load_rows: int = 20_000
    local_vectors_retry_seconds: float = 600.0
    local_vectors_write_lag_seconds: float = 120.0
    local_vectors_verify_seconds: float = 30.0
    local_vectors_reload_seconds: float = 43_200.0
    # The passages' and facts' text lists ranked by BM25 on the rows held for their vectors (db/local_text.py); False
    # sends them to the database's full-text indexes.
    local_text: bool = True
    # ... and when the request's filter keeps too few of a text list's first candidates, at most this many more matching
    # rows are read on, best first (the engine reads each id it is given, whatever the LIMIT: the first read stays small).
    local_text_read_on: int = 4096
    max_terms: int = 8  # query terms sent to a full-text list (content words, in query order)
    df_cap: int = 256  # a term in more rows than this costs too much alone (per matching row): searched for only ANDed
    # A lexical list is scored in the query (db/lexical_score.py) when its matching rows × scorer_rows < its branches ×
    # the table's rows: scoring in the query costs per matching row (search::analyze and the arithmetic) about what the
    # engine's scorer costs per scorer_rows rows of the table and branch, whatever it matches (bench/lexical_score.py).
    scorer_rows: int = 32
    # In a table of more rows than this a common term is scored (to find whether it is in half the rows: its score is 0)
    # only when it is in half_sample_share of the first or of the last 128 rows in id order (the oldest, the newest): the
    # score costs in proportion to the table's rows (db/retrieval_store._scoreless_among).
    half_sample_above: int = 4096
    half_sample_share: float = 0.35
    term_counts_ttl_seconds: float = 60.0  # how long a probed document frequency is trusted per process
    term_counts_max_entries: int = 100_000  # document frequencies remembered per process

    # -- the response cache (db/trace_store.py) ----------------------------------------------------------------------
    cache_neighbours: int = 32  # nearest traces holding a question vector (any caller) examined before giving up
    cache_ef: int = 64  # HNSW candidate list of that search
    same_question_limit: int = 8  # newest answers to the same canonical question examined

    # -- sweeps (domain/lifecycle.py, db/lifecycle_store.py) ---------------------------------------------------------
    # An HNSW index is rebuilt once the rows added since its last build reach reindex_min_new_rows and either
    # reindex_min_growth of the index or reindex_max_backlog rows (bench/cache.py, bench/retrieval.py).
    reindex_min_new_rows: int = 1000
    reindex_min_growth: float = 0.2
    reindex_max_backlog: int = 10_000
    sweep_batch: int = 5000  # ids per sweep statement (bench/lifecycle.py)

    # -- conversation windows and forget (domain/transcript.py, domain/forget.py) ------------------------------------
    window_turns: int = 10  # earlier turns of the session a /chat prompt carries
    window_chars: int = 8000  # ...within this many characters
    forget_similarity: float = 0.6  # cosine a row needs to the forget query to match: a vague query forgets nothing


TUNING = Tuning()


def knobs() -> Tuning:
    """The knobs in force (read at call time, so a test's replacement is seen)."""
    return TUNING
