"""Vectors for what a write plan creates, computed in one batch just before its transaction, and the text each
kind of row is embedded as (retrieval scores hits against the same text).

Chunks of turns queued for extraction are embedded by the worker (``EmbedChunk``), so the request that accepted the
turn never waits for the model.
"""

from __future__ import annotations

from dataclasses import replace

from agent_memory.embeddings import Embedder
from agent_memory.write_ops import CreateAttribute, CreateChunk, EmbedChunk, Operation, UpsertEntity, WritePlan


def attribute_text(entity_name: str, key: str, value: str) -> str:
    return f'{entity_name} {key.replace("_", " ")}: {value}'


def entity_text(name: str, entity_type: str) -> str:
    return f'{name} ({entity_type})'


def _text(op: Operation, names: dict[tuple[str, str], str]) -> str | None:
    """What ``op`` is embedded as, or None when it is not embedded now (already embedded: a retried commit)."""
    if isinstance(op, CreateChunk):
        return op.text if op.embedding is None and not op.deferred else None
    if isinstance(op, EmbedChunk) and op.embedding is None:
        return op.text
    if isinstance(op, UpsertEntity) and op.embedding is None:
        return entity_text(op.name or op.key[1], op.key[0])
    if isinstance(op, CreateAttribute) and op.embedding is None:
        return attribute_text(names.get(op.entity_key) or op.entity_key[1], op.key, op.value)
    return None


def embed_plan(plan: WritePlan, embedder: Embedder) -> None:
    """Fill ``embedding`` on the plan's new chunks, entities and attributes and the worker's chunk updates (one call)."""
    names = {op.key: op.name for op in plan.of(UpsertEntity)}
    targets = [(i, text) for i, op in enumerate(plan.operations) if (text := _text(op, names)) is not None]
    if not targets:
        return
    vectors = embedder.embed([text for _, text in targets])
    for (i, _), vector in zip(targets, vectors, strict=True):
        op = plan.operations[i]
        assert isinstance(op, CreateChunk | EmbedChunk | UpsertEntity | CreateAttribute)
        plan.operations[i] = replace(op, embedding=vector)
