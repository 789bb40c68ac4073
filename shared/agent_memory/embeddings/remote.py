"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (the real ``openai`` client)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from agent_memory.errors import ProviderUnavailable

BATCH = 256


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
                vectors.append(_normalised(list(row.embedding), self.dimension))
        return vectors


def _normalised(vector: list[float], dimension: int) -> list[float]:
    if len(vector) != dimension:
        raise ProviderUnavailable(f'embedding provider returned {len(vector)} dimensions, configured {dimension}')
    norm = math.sqrt(sum(v * v for v in vector)) or 1.0
    return [v / norm for v in vector]
