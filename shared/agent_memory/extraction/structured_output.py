"""Structured-output modes for the extraction request, strongest first, and what each server accepted.

* ``json_schema``: ``response_format`` json_schema, strict (OpenAI, vLLM, recent llama.cpp ``llama-server``).
* ``json_object``: ``response_format`` json_object, the schema in the system prompt (llama-cpp-python's
  server, older OpenAI-compatible gateways).
* ``prompt``: no ``response_format``; the schema in the system prompt, the reply parsed and validated
  (prose around the JSON object is tolerated).

In ``auto`` a request the server rejects as invalid is tried again in the next weaker mode, and the first
mode that is accepted is remembered per (base URL, model) for the life of the process, so the probing
costs one rejected request per cold start, not one per turn.
"""

from __future__ import annotations

import threading
from typing import Literal, get_args

from agent_memory.config import Setting

Mode = Literal['json_schema', 'json_object', 'prompt']
MODES: tuple[Mode, ...] = get_args(Mode)


class LearnedModes:
    """The mode each (base URL, model) accepted, shared by every extractor of the process."""

    def __init__(self) -> None:
        self._modes: dict[tuple[str, str], Mode] = {}
        self._lock = threading.Lock()

    def candidates(self, setting: Setting, base_url: str, model: str) -> tuple[Mode, ...]:
        """The modes to try, in order: a forced mode alone; in ``auto`` the remembered mode and the weaker ones."""
        if setting != 'auto':
            return (setting,)
        with self._lock:
            start = self._modes.get((base_url, model), MODES[0])
        return MODES[MODES.index(start) :]

    def accepted(self, base_url: str, model: str, mode: Mode) -> None:
        with self._lock:
            self._modes[(base_url, model)] = mode


LEARNED = LearnedModes()
