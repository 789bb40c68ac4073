"""Vectors for what a write plan creates, computed in one batch just before its transaction.

Chunks of turns queued for extraction are embedded by the worker (``chunk_embeddings``), so the
request that accepted the turn never waits for the model.
"""

from __future__ import annotations

from typing import Any

from agent_memory.domain.write_plan import WritePlan
from agent_memory.embeddings import Embedder


def attribute_text(entity_name: str, key: str, value: str) -> str:
    return f'{entity_name} {key.replace("_", " ")}: {value}'


def entity_text(name: str, entity_type: str) -> str:
    return f'{name} ({entity_type})'


def attach_embeddings(plan: WritePlan, embedder: Embedder) -> list[tuple[str, list[float]]]:
    """Fill ``embedding`` on new chunks, entities and attributes; return the worker's chunk updates."""
    names = {tuple(e['key']): e.get('name') or e['key'][1] for e in plan.entities}
    targets: list[tuple[dict[str, Any], str]] = []
    for chunk in plan.chunks:
        if chunk.get('embedding') is None and not chunk.pop('deferred', False):
            targets.append((chunk, chunk['text']))
    for entity in plan.entities:
        targets.append((entity, entity_text(names[tuple(entity['key'])], entity['key'][0])))
    for attribute in plan.new_attributes:
        name = names.get(tuple(attribute['entity_key'])) or attribute['entity_key'][1]
        targets.append((attribute, attribute_text(name, attribute['key'], attribute['value'])))
    texts = [text for _, text in targets] + [text for _, text in plan.chunk_embeddings]
    if not texts:
        return []
    vectors = embedder.embed(texts)
    for (row, _), vector in zip(targets, vectors, strict=False):
        row['embedding'] = vector
    return [(chunk_id, vector) for (chunk_id, _), vector in zip(plan.chunk_embeddings, vectors[len(targets) :], strict=True)]
