"""The LLM composer for /chat and /reflect: any OpenAI-compatible endpoint through the ``openai`` client.

An adapter behind the domain's ``Composer`` port (``domain/synthesis.py``), built by the composition root
(``composition.Services.synthesizer``); ``openai`` is imported only when one is built.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_memory.domain.reply_style import for_the_model
from agent_memory.domain.retrieval import Hit
from agent_memory.domain.synthesis import CHAT_SYSTEM, Composition, resolve_citations, user_prompt
from agent_memory.errors import ProviderUnavailable, Unprocessable
from agent_memory.extraction.context_window import exceeds_context_window
from agent_memory.extraction.llm import NO_API_KEY, error_message
from agent_memory.rows.conversation import TurnRow
from agent_memory.rows.directives import InstructionRow

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

_TOO_LONG = "the message alone is longer than the synthesis model's context window"
_DELTA = re.compile(r'\S+\s*')  # the SSE frames of a reply: a word and the space after it


class LlmComposer:
    """One client per cold start; one chat.completions call per answer (more only while the prompt is too long).

    The call is not streamed: the reply is needed whole (citations are resolved, and the reply stored and traced,
    before the first byte is sent), and a streamed completion can end early without an error: llama-cpp-python's
    server, by default, ends a stream with ``[DONE]`` as soon as another request waits for the model (an extraction
    of an earlier turn, say), which left an empty or cut reply (docs/llm-providers.md).

    A prompt the server refuses as longer than the model's context window is sent again with the better-ranked half
    of the sources and the newer half of the transcript, until it fits; the answer is built from what was sent.
    """

    def __init__(
        self, base_url: str, default_model: str | None, api_key: str | None, timeout_seconds: float, max_output_tokens: int | None = None
    ) -> None:
        import openai

        self.default_model = default_model
        self.max_output_tokens = max_output_tokens
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or NO_API_KEY, timeout=timeout_seconds, max_retries=1)

    def compose(
        self,
        question: str,
        sources: Sequence[Hit],
        transcript: Sequence[TurnRow],
        model: str | None,
        system: str = CHAT_SYSTEM,
        caller_refs: frozenset[str] = frozenset(),
        instructions: Sequence[InstructionRow] = (),
    ) -> Composition:
        import openai

        system += for_the_model(instructions)
        chosen = model or self.default_model
        if not chosen:
            raise ProviderUnavailable('no synthesis model is configured (models.synthesis or AGENT_MEMORY_LLM_SYNTHESIS_MODEL)')
        shown, window = list(sources), list(transcript)
        while True:
            try:
                completion = self._complete(chosen, system, user_prompt(question, shown, window, caller_refs))
                break
            except openai.APIStatusError as exc:
                if not exceeds_context_window(exc.status_code, exc.code, error_message(exc)):
                    raise ProviderUnavailable(f'synthesis failed: {type(exc).__name__}') from exc
                if not shown and not window:
                    raise Unprocessable(_TOO_LONG) from exc
                shown, window = shown[: len(shown) // 2], window[len(window) // 2 :]
            except openai.OpenAIError as exc:
                raise ProviderUnavailable(f'synthesis failed: {type(exc).__name__}') from exc
        content = completion.choices[0].message.content if completion.choices else None
        reply, cited = resolve_citations(content or '', shown)
        if not reply:
            raise ProviderUnavailable('synthesis returned an empty reply')
        usage = {'prompt': completion.usage.prompt_tokens, 'completion': completion.usage.completion_tokens} if completion.usage else None
        return Composition(reply, cited, chosen, usage, _DELTA.findall(reply), read_sources=shown, read_transcript=bool(window))

    def _complete(self, model: str, system: str, prompt: str) -> ChatCompletion:
        cap: dict[str, Any] = {} if self.max_output_tokens is None else {'max_tokens': self.max_output_tokens}
        completion: ChatCompletion = self._client.chat.completions.create(
            model=model, messages=[{'role': 'system', 'content': system}, {'role': 'user', 'content': prompt}], **cap
        )
        return completion
