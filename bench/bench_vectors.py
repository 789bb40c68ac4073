"""Embeddings of generated bench texts, computed once and kept on disk under ``bench_env.CACHE`` (``bench/.cache``).

A file is named by what decides its contents: the generator's name and version (bump it when the texts change),
the embedding model id, the text count and a hash of the texts themselves, so a stale file is never read. Texts
are embedded straight through the model (no per-process memo) in large slices; progress is saved every slice,
so an interrupted run resumes where it stopped. Run heavy computations under ``nice -n 10``.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from bench_env import CACHE

from agent_memory.embeddings import Embedder

SLICE = 4096


def cache_path(name: str, version: int, model_id: str, texts: Sequence[str]) -> Path:
    digest = hashlib.sha256('\n'.join(texts).encode()).hexdigest()[:12]
    return CACHE / f'{name}-v{version}-{model_id}-{len(texts)}-{digest}.npy'


def cached_vectors(model: Embedder, name: str, version: int, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
    """One float32 row per text, from the cache or computed now (and cached)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    path = cache_path(name, version, model.model_id, texts)
    if path.exists():
        done: np.ndarray[Any, np.dtype[np.float32]] = np.load(path)
        return done
    partial = path.with_suffix('.partial.npy')
    parts = [np.load(partial)] if partial.exists() else []
    start = len(parts[0]) if parts else 0
    started, first = time.perf_counter(), start
    while start < len(texts):
        stop = min(len(texts), start + SLICE)
        parts.append(np.asarray(model.embed(texts[start:stop]), dtype=np.float32))
        start = stop
        np.save(partial, np.concatenate(parts))
        parts = [np.load(partial)]
        rate = (start - first) / (time.perf_counter() - started)
        print(f'  embedded {start:,}/{len(texts):,} {name}: {rate:.0f} texts/s, load {os.getloadavg()[0]:.1f}', file=sys.stderr)
    vectors = np.concatenate(parts) if parts else np.zeros((0, model.dimension), dtype=np.float32)
    np.save(path, vectors)
    partial.unlink(missing_ok=True)
    return vectors
