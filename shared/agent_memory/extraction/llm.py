"""The LLM extraction stage: one structured-output call to any OpenAI-compatible endpoint (CONTRACT §6.2).

Failure handling, decided once here so the worker only has two exceptions to know:

* invalid JSON or a reply that does not match the schema → exactly one repair request (the rejected
  reply and the reason are sent back); still invalid → ``ProviderOutputInvalid``: the caller keeps
  stage 0 and records the failure on the turn.
* 429, 408, 409, any 5xx, a timeout or a connection failure → ``ProviderRetryable``: the worker fails
  the SQS message and SQS retries it after the visibility timeout (then the DLQ). The client itself
  never retries (``max_retries=0``), so one attempt costs at most ``timeout_seconds`` per request,
  and a whole ``extract`` at most about twice that (first request plus the repair).
* any other 4xx (400 bad request or context too long, 401/403 bad key, 404 unknown model, 422) →
  ``ProviderRequestRejected``, a ``ProviderOutputInvalid``: retrying the message cannot fix a
  configuration problem, and failing it would only park every turn in the DLQ, so stage 0 is kept and
  the failure is recorded on the turn, like invalid output. No repair request is sent for these.
* a 2xx body that is not a chat completion (e.g. an HTML page: the base URL misses ``/v1``) →
  ``ProviderOutputInvalid`` for the same reason, also without a repair request.

Nothing here reads the environment: ``build_llm_extractor`` takes the settings as parameters.
``openai`` is imported lazily, so a deployment without an LLM never pays for the import.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, cast

from agent_memory.extraction import prompts
from agent_memory.extraction.errors import ProviderOutputInvalid, ProviderRetryable
from agent_memory.extraction.model import Extraction, ExtractionContext
from agent_memory.observability import logger

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

DEFAULT_TIMEOUT_SECONDS = 20.0
# Sent when no key is configured: local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) need none,
# and the openai client refuses to start without one (it would otherwise fall back to OPENAI_API_KEY).
NO_API_KEY = 'no-key'
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class ProviderRequestRejected(ProviderOutputInvalid):
    """The provider refused the request with a 4xx that retrying cannot fix (bad key, unknown model, request too large)."""

    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message)
        self.status_code = status_code


class LlmExtractor:
    """One per cold start; ``extract`` is one chat.completions call (plus at most one repair call) per turn."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        temperature: float | None = None,
        client: openai.OpenAI | None = None,
    ) -> None:
        if not base_url or not model:
            raise ValueError('an LLM extractor needs a base URL and a model')
        if timeout_seconds <= 0:
            raise ValueError('timeout_seconds must be positive')
        self.default_model = model
        self.timeout_seconds = timeout_seconds
        self.temperature = temperature  # None: the provider's default (some reasoning models reject any other value)
        if client is None:
            import openai

            client = openai.OpenAI(base_url=base_url, api_key=api_key or NO_API_KEY, timeout=timeout_seconds, max_retries=0)
        self._client = client

    def close(self) -> None:
        self._client.close()

    def extract(self, text: str, ctx: ExtractionContext, stage0: Extraction, model: str | None = None) -> Extraction:
        """The extraction of ``text`` (complete, not a delta over stage 0: stage 0 is only a hint to the model).

        ``model`` is the context's ``models.extraction`` override; None uses the default model.
        Raises ``ProviderRetryable`` (retry the SQS message) or ``ProviderOutputInvalid`` (keep stage 0, record it).
        """
        model = model or self.default_model
        messages = prompts.build_messages(text, ctx, stage0)
        content = self._complete(model, messages)
        try:
            return prompts.parse_reply(content, ctx)
        except ValueError as exc:
            error = prompts.describe_error(exc)
        logger.warning('LLM extraction output invalid, sending one repair request', extra={'model': model, 'error': error})
        repaired = self._complete(model, [*messages, *prompts.repair_messages(content, error)])
        try:
            return prompts.parse_reply(repaired, ctx)
        except ValueError as exc:
            error = prompts.describe_error(exc)
        logger.warning('LLM extraction output still invalid after the repair request', extra={'model': model, 'error': error})
        raise ProviderOutputInvalid(f'model {model!r} returned invalid output twice: {error}')

    def _complete(self, model: str, messages: list[dict[str, str]]) -> str:
        """One request; the reply's text (empty when the model sent none, which then fails parsing)."""
        import openai

        extra: dict[str, Any] = {} if self.temperature is None else {'temperature': self.temperature}
        try:
            completion = self._client.chat.completions.create(
                model=model,
                # Plain role/content dicts are valid message params; the cast only spares building TypedDicts by hand.
                messages=cast('list[ChatCompletionMessageParam]', messages),
                response_format=cast('ResponseFormat', prompts.response_format()),
                **extra,
            )
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            raise ProviderRetryable(f'LLM provider unreachable or too slow: {type(exc).__name__}') from exc
        except openai.APIStatusError as exc:
            message = f'LLM provider answered HTTP {exc.status_code}: {_error_message(exc)}'
            if exc.status_code in _RETRYABLE_STATUS or exc.status_code >= 500:
                raise ProviderRetryable(message) from exc
            raise ProviderRequestRejected(message, exc.status_code) from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise ProviderOutputInvalid(f'LLM provider sent a malformed response: {type(exc).__name__}') from exc
        return _reply_text(completion)


def _reply_text(completion: object) -> str:
    """The first choice's text. A 2xx body that is not a chat completion (an HTML page from a wrong base URL, a
    proxy's answer) is a malformed response, not model output: no repair, keep stage 0 like a rejected request."""
    choices = getattr(completion, 'choices', None)
    if not isinstance(choices, list):
        raise ProviderOutputInvalid('LLM provider sent a response that is not a chat completion (check the base URL)')
    content = getattr(getattr(choices[0], 'message', None), 'content', None) if choices else None
    return content if isinstance(content, str) else ''  # no text (a refusal, no choices) fails parsing → repair


def _error_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get('message'), str):
        return str(body['message'])[:300]
    return exc.message[:300]


def build_llm_extractor(
    *,
    base_url: str | None,
    model: str | None,
    api_key: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
) -> LlmExtractor | None:
    """The LLM stage, or None when no base URL or no default model is configured (stage 0 is then the whole extractor)."""
    if not base_url or not model:
        return None
    return LlmExtractor(base_url=base_url, model=model, api_key=api_key, timeout_seconds=timeout_seconds)
