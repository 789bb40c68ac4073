"""What an embedding must be before anything stores it (docs/architecture.md "Vector fields").

The database refuses the same vectors (migration 0017's ASSERT and the HNSW index), but only inside the write's
transaction, as an engine error; checked here, a provider's bad vector is a clear 503 before the write begins.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

F32_MAX = 3.4e38  # the HNSW indexes hold 32-bit floats
_NUMBERS = {float, int}


def vector_fault(vector: Sequence[Any], dimension: int) -> str | None:
    """Why ``vector`` cannot be stored as an embedding of ``dimension`` numbers; None when it can."""
    if len(vector) != dimension:
        return f'{len(vector)} dimensions, configured {dimension}'
    if not set(map(type, vector)) <= _NUMBERS:  # bools, strings, nested lists, None
        return 'an element that is not a number'
    magnitude_squared = sum(map(operator.mul, vector, vector))
    if not 0 < magnitude_squared < F32_MAX * F32_MAX:  # NaN fails both comparisons; ±inf the second
        return 'a NaN, infinite, zero or out-of-range value'
    return None
