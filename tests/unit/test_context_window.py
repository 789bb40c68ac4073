"""How OpenAI-compatible servers word a prompt that does not fit the context window (extraction/context_window.py)."""

from __future__ import annotations

import pytest

from agent_memory.extraction.context_window import exceeds_context_window

LLAMA_CPP_PYTHON = (
    "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (5120 in the messages, None in the "
    'completion). Please reduce the length of the messages or completion.'
)


@pytest.mark.parametrize(
    ('status', 'code', 'message'),
    [
        (400, 'context_length_exceeded', LLAMA_CPP_PYTHON),  # llama-cpp-python, OpenAI
        (400, None, LLAMA_CPP_PYTHON),  # vLLM: the same sentence, no code
        (400, None, 'the request exceeds the available context size, try increasing it'),  # llama.cpp llama-server
        (400, 'exceed_context_size_error', 'request (5120 tokens) exceeds the available context (4096 tokens)'),
    ],
)
def test_the_servers_wordings_are_recognised(status: int, code: str | None, message: str) -> None:
    # Given a context-window rejection as each server words it, When it is classified, Then it is recognised as exceeding the context window
    assert exceeds_context_window(status, code, message)


@pytest.mark.parametrize(
    ('status', 'code', 'message'),
    [
        (500, None, LLAMA_CPP_PYTHON),  # a server error is not the prompt's length
        (400, None, "response_format type 'json_schema' is not supported"),
        (422, None, 'Input should be a valid string'),
    ],
)
def test_other_rejections_are_not(status: int, code: str | None, message: str) -> None:
    # Given a server error or a 4xx about something else, When it is classified, Then it is not taken for a context-window overflow
    assert not exceeds_context_window(status, code, message)
