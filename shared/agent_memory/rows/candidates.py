"""Rows a retrieval list returned (``db/retrieval_store.py``): each table's projection, plus the list's score."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from agent_memory.rows.scopes import ScopeSets


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    table: str  # attribute, entity, memory_chunk, relates_to or action
    ref: str  # the row's wire ref
    scope_sets: ScopeSets | None = None
    importance: float | None = None
    created_at: dt.datetime | None = None
    # attribute (``entity`` is an entity ref; ``entity_name`` its display name)
    entity: str | None = None
    entity_name: str | None = None
    key: str | None = None
    value: str | None = None
    # entity
    name: str | None = None
    type: str | None = None
    # memory_chunk (``session_key`` is the stored session key, ``turn`` the bare turn id; on a fact, its source turn)
    text: str | None = None
    role: str | None = None
    session_key: str | None = None
    session_id: str | None = None  # the id callers use
    turn: str | None = None
    spoken_at: dt.datetime | None = None
    seq: int | None = None
    speaker: str | None = None  # the turn's named speaker (a message's ``name``)
    principal: str | None = None  # the principal that wrote the turn
    # relates_to (``subject``/``object`` are entity refs) and action (``actor``/``object``)
    subject: str | None = None
    subject_name: str | None = None
    object: str | None = None
    object_name: str | None = None
    label: str | None = None
    actor: str | None = None
    actor_name: str | None = None
    verb: str | None = None
    summary: str | None = None
    object_text: str | None = None
    occurred_at: dt.datetime | None = None
    # the list's measure: KNN distance, BM25 score, or closeness to the query (facts about an entity)
    distance: float | None = None
    bm25: float | None = None
    closeness: float | None = None
