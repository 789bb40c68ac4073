"""The composition root: long-lived collaborators, built once per cold start and reused while the container is warm.

The only module that knows both sides: it builds the repository (``db/``) with the domain's policies and hands the
domain its stores. Handlers, the MCP server and the local runtime start from ``get_services()``.

Lazy by design (docs/architecture.md, "Cold start"): a module imported here at the top lands on the cold start of
every function, so the top imports only what ``start_services`` runs (the connection, the control and rate-limit
stores, the embedding model's identity, which loads no model) and the importance rule (two small modules). A
context's stores, the extraction pipeline and the composer are imported where they are first built, so
``GET /health`` never loads the memory store or the extraction stack, and a data-plane read loads the stores but
not extraction or synthesis.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from agent_memory.clock import utcnow
from agent_memory.config import Settings, get_settings
from agent_memory.db.connection import Database, context_db_name, get_database
from agent_memory.db.control_store import ControlStore
from agent_memory.db.migrations import ensure_migrated
from agent_memory.db.rate_limit_store import RateLimitStore
from agent_memory.db.reinforcement import ImportanceRule
from agent_memory.domain.importance import DAILY_DECAY, IMPORTANCE_MAX, REINFORCEMENT
from agent_memory.domain.key_hashes import sync_management_keys
from agent_memory.embeddings import EmbeddingMismatch, LazyEmbedder
from agent_memory.jobs import JobQueue, SqsJobQueue

if TYPE_CHECKING:
    from agent_memory.db.context_stores import ContextStores
    from agent_memory.db.lifecycle_store import LifecycleStore
    from agent_memory.db.memory_store import MemoryStore
    from agent_memory.db.principal_store import PrincipalStore
    from agent_memory.domain.extraction_pipeline import Extractors
    from agent_memory.domain.pipeline import Pipeline
    from agent_memory.domain.synthesis import Composer
    from agent_memory.extraction.model import Extraction, ExtractionContext


IMPORTANCE = ImportanceRule(reinforce_by=REINFORCEMENT, cap=IMPORTANCE_MAX, decaying=tuple(DAILY_DECAY))


@dataclass
class Services:
    db: Database
    control: ControlStore
    rate_limits: RateLimitStore
    queue: JobQueue | None
    embedder: LazyEmbedder
    settings: Settings
    _contexts: dict[str, ContextStores] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _composer: Composer | None = None

    def context(self, context_id: str) -> ContextStores:
        """The context's stores (its schema migrated on first use), built once and kept while the container is warm."""
        stores = self._contexts.get(context_id)
        if stores is None:
            from agent_memory.db.context_stores import ContextStores

            with self._lock:
                stores = self._contexts.get(context_id)
                if stores is None:
                    stores = ContextStores(self.db, context_id, IMPORTANCE)
                    self._contexts[context_id] = stores
        return stores

    def migrated(self, context_id: str) -> None:
        """The context's schema migrated (once per process), without building or importing any of its stores."""
        ensure_migrated(self.db, context_db_name(context_id), 'context')

    def principals(self, context_id: str) -> PrincipalStore:
        """A context's principals (management and self-service routes)."""
        from agent_memory.db.principal_store import PrincipalStore

        return PrincipalStore(self.db, context_id)

    def store(self, context_id: str) -> MemoryStore:
        return self.context(context_id).memory

    def lifecycle(self, context_id: str) -> LifecycleStore:
        return self.context(context_id).lifecycle

    @property
    def max_receives(self) -> int:
        return get_settings().max_receives

    @cached_property
    def extractors(self) -> Extractors:
        """Built on first use: only the functions that extract pay for the extraction pipeline's imports."""
        return build_extractors(self.settings)

    def pipeline(self) -> Pipeline:
        from agent_memory.domain.pipeline import Pipeline

        return Pipeline(self.queue, self.extractors, self.embedder)

    def synthesizer(self) -> Composer:
        """The LLM composer when an OpenAI-compatible endpoint is configured, else the extractive one."""
        if self._composer is None:
            settings = get_settings()
            if settings.llm_base_url:
                from agent_memory.adapters.openai_composer import LlmComposer

                default_model = settings.llm_synthesis_model or settings.llm_extraction_model
                self._composer = LlmComposer(
                    settings.llm_base_url, default_model, settings.llm_api_key, settings.llm_timeout_seconds, settings.llm_max_output_tokens
                )
            else:
                from agent_memory.domain.synthesis import ExtractiveComposer

                self._composer = ExtractiveComposer()
        return self._composer

    def drop_context(self, context_id: str) -> None:
        """Drop this process's stores of a deleted context (a later request for the id starts from a fresh schema check)."""
        self._contexts.pop(context_id, None)


@lru_cache(maxsize=1)
def get_services() -> Services:
    return start_services(get_database(), get_settings())


def start_services(db: Database, settings: Settings) -> Services:
    """A cold start: register the configured management keys (revoking any other), check the embedding model."""
    control = ControlStore(db)
    sync_management_keys(control, settings.management_keys)
    queue = SqsJobQueue(settings.queue_url) if settings.queue_url else None
    embedder = LazyEmbedder(settings)
    check_embedding_model(control, embedder)
    return Services(db=db, control=control, rate_limits=RateLimitStore(db), queue=queue, embedder=embedder, settings=settings)


def check_embedding_model(control: ControlStore, embedder: LazyEmbedder) -> None:
    """Stored vectors are only comparable with the model that made them: refuse to start on a mismatch."""
    model, dimension = control.claim_embedding_model(embedder.model_id, embedder.dimension, utcnow())
    if (model, dimension) != (embedder.model_id, embedder.dimension):
        raise EmbeddingMismatch(
            f'this database holds {dimension}-d vectors from {model!r}, but the deployment is configured for '
            f'{embedder.dimension}-d {embedder.model_id!r}; set AGENT_MEMORY_EMBEDDING_* back, or re-embed into a new database'
        )


def build_extractors(settings: Settings) -> Extractors:
    """Stage 0 always; the LLM stage only when a base URL and model are configured (imports openai only then)."""
    from agent_memory.domain.extraction_pipeline import Extractors

    llm = None
    if settings.llm_base_url and settings.llm_extraction_model:
        from agent_memory.extraction.llm import build_llm_extractor

        llm = build_llm_extractor(
            base_url=settings.llm_base_url,
            model=settings.llm_extraction_model,
            api_key=settings.llm_api_key,
            timeout_seconds=settings.llm_timeout_seconds,
            structured_output=settings.llm_structured_output,
            max_output_tokens=settings.llm_max_output_tokens,
        )
    return Extractors(stage0=_stage0, llm=llm)


def _stage0(text: str, ctx: ExtractionContext) -> Extraction:
    from agent_memory.extraction.deterministic import extract  # imported on first extraction, not on every cold start

    return extract(text, ctx)


def reset_services() -> None:
    """Drop the cached connection and stores (tests, and the local runtime's shutdown)."""
    if get_services.cache_info().currsize:
        get_services().db.close()
    get_services.cache_clear()
    get_database.cache_clear()
    get_settings.cache_clear()
