"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (the real ``openai`` client).

The provider's vectors are untrusted input: one that cannot be stored as a unit vector (wrong length, an element
that is not a number, NaN, ±inf, all zeros) fails the request with a 503 before anything is written. The database
refuses such vectors too (migration 0017's ASSERT and the HNSW index), but only inside the write's transaction, as an
engine error; the local model's vectors are finite unit vectors by construction.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from agent_memory.errors import ProviderUnavailable

BATCH = 256
_NUMBERS = {float, int}


class OpenAIEmbedder:
    def __init__(self, base_url: str, model: str, dimension: int, api_key: str | None, timeout_seconds: float) -> None:
        from openai import OpenAI

        self.model_id = f'openai:{model}'
        self.dimension = dimension
        self._model = model
        self._client = OpenAI(base_url=base_url, api_key=api_key or 'unset', timeout=timeout_seconds, max_retries=2)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import openai

        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH):
            batch = list(texts[start : start + BATCH])
            try:
                response = self._client.embeddings.create(model=self._model, input=batch)
            except openai.OpenAIError as exc:
                raise ProviderUnavailable(f'embedding request failed: {exc}') from exc
            rows = sorted(response.data, key=lambda d: d.index)
            if len(rows) != len(batch):
                raise ProviderUnavailable(f'embedding provider returned {len(rows)} vectors for {len(batch)} texts')
            for row in rows:
                vectors.append(_normalised(row.embedding, self.dimension))
        return vectors


def _normalised(vector: Any, dimension: int) -> list[float]:
    if not isinstance(vector, list):
        raise ProviderUnavailable(f'embedding provider returned a {type(vector).__name__} where a vector belongs')
    if len(vector) != dimension:
        raise ProviderUnavailable(f'embedding provider returned {len(vector)} dimensions, configured {dimension}')
    if not set(map(type, vector)) <= _NUMBERS:  # bools, strings, nested lists, null
        raise ProviderUnavailable('embedding provider returned an element that is not a number')
    norm = math.sqrt(sum(map(operator.mul, vector, vector)))
    if not 0 < norm < math.inf:  # NaN fails both comparisons
        raise ProviderUnavailable('embedding provider returned a vector with NaN or infinite values, or all zeros')
    return [v / norm for v in vector]
