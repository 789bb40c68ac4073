"""How turn text becomes memory chunks (passages): split, and named so any process can address them."""

from __future__ import annotations

# ~250 tokens: the embedding model reads 256 tokens, so a chunk is embedded whole.
CHUNK_CHARS = 1000


def split_text(text: str, size: int = CHUNK_CHARS) -> list[str]:
    """Split long turn text into chunks of at most ``size`` characters, preferring whitespace boundaries."""
    chunks, rest = [], text
    while len(rest) > size:
        cut = rest.rfind(' ', 0, size)
        cut = size if cut <= size // 2 else cut
        chunks.append(rest[:cut].strip())
        rest = rest[cut:]
    if rest.strip() or not chunks:
        chunks.append(rest.strip())
    return [c for c in chunks if c] or [text]


def chunk_id(turn_id: str, position: int) -> str:
    """Deterministic, so the extraction worker can embed a queued turn's chunks without reading them."""
    return f'{turn_id}_{position}'
