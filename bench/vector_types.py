"""The vector fields as declared before migration 0017 and after it, for benchmarks that run both on the same code.

``coerced``: ``option<array<float>>`` as migration 0001 declared them, with the element field (``<field>.*`` typed
float) the engine derives from that type; ``plain``: what 0017 declares (``any`` and one ASSERT). A database is
migrated to the newest schema first; ``declare(…, 'coerced')`` then puts the four fields back as they were, which is
all 0017 changed, so old and new differ in nothing else.
"""

from __future__ import annotations

import math
import random
from typing import Any

from agent_memory.db.sdk import Vector

VECTOR_TYPES = ('coerced', 'plain')
VECTOR_FIELDS = (('memory_chunk', 'embedding'), ('entity', 'embedding'), ('attribute', 'embedding'), ('retrieval_trace', 'query_embedding'))
BEFORE_0017 = ' '.join(f'DEFINE FIELD OVERWRITE {field} ON {table} TYPE option<array<float>>;' for table, field in VECTOR_FIELDS)


def declare(db: Any, database: str, types: str) -> None:
    """Give an up-to-date database's vector fields the ``types`` of VECTOR_TYPES (``plain`` is what it has)."""
    if types not in VECTOR_TYPES:
        raise ValueError(f'vector types {types!r}: expected one of {VECTOR_TYPES}')
    if types == 'coerced':
        db.query(database, BEFORE_0017)


def parse_types(text: str) -> list[str]:
    chosen = [t.strip() for t in text.split(',') if t.strip()]
    if not chosen or any(t not in VECTOR_TYPES for t in chosen):
        raise ValueError(f'--vector-types {text!r}: a comma-separated subset of {",".join(VECTOR_TYPES)}')
    return chosen


def unit_vector(seed: int, dimension: int = 384) -> Vector:
    """A deterministic random unit vector (the write cost does not depend on what the vector means)."""
    rng = random.Random(seed)
    values = [rng.gauss(0.0, 1.0) for _ in range(dimension)]
    norm = math.sqrt(sum(v * v for v in values))
    return Vector(v / norm for v in values)
