"""A request the server refused because its prompt does not fit the model's context window.

Servers say so in their own words, with HTTP 400: OpenAI and llama-cpp-python send ``code: context_length_exceeded``
("This model's maximum context length is 4096 tokens. However, you requested …"), vLLM the same sentence, llama.cpp's
``llama-server`` ``exceed_context_size_error`` ("the request exceeds the available context size"). Ollama cuts the
prompt silently instead, so it cannot be recognised. Sending the same prompt again, or in another structured-output
mode (which only adds the schema to it), cannot succeed; a shorter one can.
"""

from __future__ import annotations

import re

_STATUS = frozenset({400, 413, 422})
_WORDING = re.compile(r'context[_ ]length|context window|context size|maximum context|exceed_context', re.IGNORECASE)


def exceeds_context_window(status: int, code: str | None, message: str) -> bool:
    return status in _STATUS and _WORDING.search(f'{code or ""} {message}') is not None
