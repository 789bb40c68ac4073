"""The in-process vector search of db/local_vectors.py: exact cosine ranking, and rows added, replaced and dropped."""

from __future__ import annotations

import numpy as np

from agent_memory.db.local_vectors import _Vectors
from agent_memory.db.records import rid


def rows(vectors: np.ndarray, start: int = 0) -> list[dict[str, object]]:
    return [{'id': rid('memory_chunk', f'k{start + i}'), 'embedding': list(map(float, v))} for i, v in enumerate(vectors)]


def brute_force(vectors: dict[str, np.ndarray], query: np.ndarray, k: int) -> list[tuple[str, float]]:
    scored = {key: float(v @ query / np.linalg.norm(v) / np.linalg.norm(query)) for key, v in vectors.items()}
    return [(key, 1.0 - s) for key, s in sorted(scored.items(), key=lambda kv: -kv[1])[:k]]


def test_the_nearest_rows_are_the_exact_cosine_ranking_through_growth_replacement_and_deletion() -> None:
    # Given 300 random vectors (the matrix grows from 64 rows), some replaced, some dropped, some without a vector
    generator = np.random.default_rng(7)
    data = generator.normal(size=(300, 8)).astype(np.float32)
    table = _Vectors(8)
    table.put(rows(data))
    expected = {f'k{i}': data[i] for i in range(300)}
    replaced = generator.normal(size=(20, 8)).astype(np.float32)
    table.put(rows(replaced, start=100))
    expected |= {f'k{100 + i}': replaced[i] for i in range(20)}
    table.drop([f'k{i}' for i in range(0, 300, 7)] + ['never-stored'])
    for i in range(0, 300, 7):
        expected.pop(f'k{i}')
    table.put([{'id': rid('memory_chunk', 'k1'), 'embedding': None}, {'id': rid('memory_chunk', 'short'), 'embedding': [1.0]}])
    expected.pop('k1')
    # When queried, Then the ranking and the distances are brute force's, and every held row is a live one
    assert len(table) == len(expected) and set(table.keys) == set(expected)
    for query in generator.normal(size=(5, 8)).astype(np.float32):
        found = table.nearest(list(map(float, query)), 15)
        exact = brute_force(expected, query, 15)
        assert [k for k, _ in found] == [k for k, _ in exact]
        assert np.allclose([d for _, d in found], [d for _, d in exact], atol=1e-5)
    assert len(table.nearest([1.0] * 8, 1000)) == len(expected)
    assert table.nearest([0.0] * 8, 5) == [] and table.nearest([1.0] * 3, 5) == []
