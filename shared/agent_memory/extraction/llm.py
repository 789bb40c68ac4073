"""The LLM extraction stage: one structured-output call to any OpenAI-compatible endpoint (CONTRACT §6.2).

Failure handling, decided once here so the worker only has two exceptions to know, each carrying a
classified ``reason`` (``errors.LlmFailure``) that is safe to store on the turn:

* invalid JSON or a reply that does not match the schema → exactly one repair request (the rejected
  reply and the reason are sent back); still invalid → ``ProviderOutputInvalid`` (``invalid_output``):
  the caller keeps stage 0 and records the failure on the turn.
* 429, 408, 409, 500 (unless its body says the request was invalid), 502/503/504, a timeout or a
  connection failure → ``ProviderRetryable``: the worker fails the SQS message and SQS retries it after
  the visibility timeout; the final delivery reconciles stage 0. The client itself never retries
  (``max_retries=0``), so one attempt costs at most ``timeout_seconds`` per request.
* a prompt longer than the model's context window (``context_window``) → ``ProviderRequestRejected``
  (``context_exceeded``) at once: a weaker mode only makes the prompt longer.
* 400, 422 or a 500 with a validation body → in ``auto`` the same request in the next weaker
  structured-output mode (``structured_output``); rejected in every mode → ``ProviderRequestRejected``.
* 401/403, 404 and any other status → ``ProviderRequestRejected`` at once, a ``ProviderOutputInvalid``:
  retrying cannot fix a configuration problem, so stage 0 is kept and the reason recorded. No repair
  request is sent for these.
* a 2xx body that is not a chat completion (e.g. an HTML page: the base URL misses ``/v1``) →
  ``ProviderOutputInvalid`` (``malformed_response``), also without a repair request.

Nothing here reads the environment: ``build_llm_extractor`` takes the settings as parameters.
``openai`` is imported lazily, so a deployment without an LLM never pays for the import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from agent_memory.config import Setting
from agent_memory.extraction import prompts
from agent_memory.extraction.context_window import exceeds_context_window
from agent_memory.extraction.errors import LlmFailure, ProviderOutputInvalid, ProviderRetryable
from agent_memory.extraction.model import Extraction, ExtractionContext
from agent_memory.extraction.structured_output import LEARNED, LearnedModes, Mode
from agent_memory.observability import logger

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

DEFAULT_TIMEOUT_SECONDS = 20.0
# Sent when no key is configured: local OpenAI-compatible servers (llama.cpp, vLLM, Ollama) need none,
# and the openai client refuses to start without one (it would otherwise fall back to OPENAI_API_KEY).
NO_API_KEY = 'no-key'
_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
_MODE_DEPENDENT_STATUS = frozenset({400, 422, 500})  # what a server answers to a response_format it does not support
# A 500 whose body reads like this is the server validating the request (llama-cpp-python answers an unsupported
# response_format so), not an outage: retrying the same request cannot succeed.
_INVALID_REQUEST_BODY = re.compile(
    r'validation error|invalid request|input should be|extra inputs|unsupported|not supported|unrecognized|unknown (?:field|parameter)',
    re.IGNORECASE,
)


class ProviderRequestRejected(ProviderOutputInvalid):
    """The provider refused the request with a status that retrying cannot fix (bad key, unknown model, bad request)."""

    def __init__(self, reason: LlmFailure, detail: str, status_code: int) -> None:
        super().__init__(reason, detail)
        self.status_code = status_code

    @property
    def mode_dependent(self) -> bool:
        return self.reason != 'context_exceeded' and self.status_code in _MODE_DEPENDENT_STATUS


@dataclass(frozen=True)
class LlmExtraction:
    extraction: Extraction
    mode: Mode  # the structured-output mode the server accepted


class LlmExtractor:
    """One per cold start; ``extract`` is one chat.completions call (plus at most one repair call) per turn, plus one
    rejected call per weaker mode while the server's mode is not yet known."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        temperature: float | None = None,
        structured_output: Setting = 'auto',
        max_output_tokens: int | None = None,
        learned: LearnedModes = LEARNED,
        client: openai.OpenAI | None = None,
    ) -> None:
        if not base_url or not model:
            raise ValueError('an LLM extractor needs a base URL and a model')
        if timeout_seconds <= 0:
            raise ValueError('timeout_seconds must be positive')
        self.base_url = base_url
        self.default_model = model
        self.timeout_seconds = timeout_seconds
        self.temperature = temperature  # None: the provider's default (some reasoning models reject any other value)
        self.structured_output = structured_output
        # None sends no ``max_tokens`` (some reasoning models reject it); a server without its own cap then lets a small
        # model that loops inside a JSON object generate until its context window is full.
        self.max_output_tokens = max_output_tokens
        self._learned = learned
        if client is None:
            import openai

            client = openai.OpenAI(base_url=base_url, api_key=api_key or NO_API_KEY, timeout=timeout_seconds, max_retries=0)
        self._client = client

    def close(self) -> None:
        self._client.close()

    def extract(self, text: str, ctx: ExtractionContext, stage0: Extraction, model: str | None = None) -> LlmExtraction:
        """The extraction of ``text`` (complete, not a delta over stage 0: stage 0 is only a hint to the model).

        ``model`` is the context's ``models.extraction`` override; None uses the default model.
        Raises ``ProviderRetryable`` (retry the SQS message) or ``ProviderOutputInvalid`` (keep stage 0, record it).
        """
        model = model or self.default_model
        modes = self._learned.candidates(self.structured_output, self.base_url, model)
        for mode in modes:
            messages = prompts.build_messages(text, ctx, stage0, mode)
            try:
                content = self._complete(model, messages, mode)
            except ProviderRequestRejected as exc:
                if not exc.mode_dependent or mode == modes[-1]:
                    raise
                logger.warning(
                    'LLM provider rejected the request, trying the next structured-output mode', extra={'model': model, 'mode': mode}
                )
                continue
            self._learned.accepted(self.base_url, model, mode)
            return LlmExtraction(self._parse_or_repair(model, messages, mode, content, ctx), mode)
        raise AssertionError('unreachable: the last mode re-raises')  # pragma: no cover

    def _parse_or_repair(self, model: str, messages: list[dict[str, str]], mode: Mode, content: str, ctx: ExtractionContext) -> Extraction:
        try:
            return prompts.parse_reply(content, ctx)
        except ValueError as exc:
            error = prompts.describe_error(exc)
        logger.warning('LLM extraction output invalid, sending one repair request', extra={'model': model, 'error': error})
        repaired = self._complete(model, [*messages, *prompts.repair_messages(content, error)], mode)
        try:
            return prompts.parse_reply(repaired, ctx)
        except ValueError as exc:
            error = prompts.describe_error(exc)
        logger.warning('LLM extraction output still invalid after the repair request', extra={'model': model, 'error': error})
        raise ProviderOutputInvalid('invalid_output', f'model {model!r} returned invalid output twice: {error}')

    def _complete(self, model: str, messages: list[dict[str, str]], mode: Mode) -> str:
        """One request; the reply's text (empty when the model sent none, which then fails parsing)."""
        import openai

        extra: dict[str, Any] = {} if self.temperature is None else {'temperature': self.temperature}
        if self.max_output_tokens is not None:
            extra['max_tokens'] = self.max_output_tokens
        response_format = prompts.response_format(mode)
        if response_format is not None:
            extra['response_format'] = cast('ResponseFormat', response_format)
        try:
            completion = self._client.chat.completions.create(
                model=model,
                # Plain role/content dicts are valid message params; the cast only spares building TypedDicts by hand.
                messages=cast('list[ChatCompletionMessageParam]', messages),
                **extra,
            )
        except openai.APITimeoutError as exc:
            raise ProviderRetryable('timeout', f'LLM provider too slow: {type(exc).__name__}') from exc
        except openai.APIConnectionError as exc:
            raise ProviderRetryable('unreachable', f'LLM provider unreachable: {type(exc).__name__}') from exc
        except openai.APIStatusError as exc:
            raise _classify(exc) from exc
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise ProviderOutputInvalid('malformed_response', f'LLM provider sent a malformed response: {type(exc).__name__}') from exc
        return _reply_text(completion)


def _classify(exc: openai.APIStatusError) -> ProviderRetryable | ProviderRequestRejected:
    status, message = exc.status_code, error_message(exc)
    detail = f'LLM provider answered HTTP {status}: {message[:300]}'  # for the logs only
    if exceeds_context_window(status, exc.code, message):
        return ProviderRequestRejected('context_exceeded', detail, status)
    if status == 500 and _INVALID_REQUEST_BODY.search(message):
        return ProviderRequestRejected('request_rejected', detail, status)
    if status in _RETRYABLE_STATUS:
        return ProviderRetryable('rate_limited' if status == 429 else 'server_error', detail)
    if status in (401, 403):
        return ProviderRequestRejected('auth_failed', detail, status)
    if status == 404:
        return ProviderRequestRejected('model_not_found' if 'model' in message.lower() else 'not_found', detail, status)
    return ProviderRequestRejected('request_rejected', detail, status)


def _reply_text(completion: object) -> str:
    """The first choice's text. A 2xx body that is not a chat completion (an HTML page from a wrong base URL, a
    proxy's answer) is a malformed response, not model output: no repair, keep stage 0 like a rejected request."""
    choices = getattr(completion, 'choices', None)
    if not isinstance(choices, list):
        raise ProviderOutputInvalid('malformed_response', 'LLM provider sent a response that is not a chat completion (check the base URL)')
    content = getattr(getattr(choices[0], 'message', None), 'content', None) if choices else None
    return content if isinstance(content, str) else ''  # no text (a refusal, no choices) fails parsing → repair


def error_message(exc: openai.APIStatusError) -> str:
    """The provider's own words (for logs and classification only, never stored or sent on)."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get('message'), str):
        return str(body['message'])
    if isinstance(body, dict | list):
        return json.dumps(body)
    return exc.message


def build_llm_extractor(
    *,
    base_url: str | None,
    model: str | None,
    api_key: str | None = None,
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
    structured_output: Setting = 'auto',
    max_output_tokens: int | None = None,
) -> LlmExtractor | None:
    """The LLM stage, or None when no base URL or no default model is configured (stage 0 is then the whole extractor)."""
    if not base_url or not model:
        return None
    return LlmExtractor(
        base_url=base_url,
        model=model,
        api_key=api_key,
        timeout_seconds=timeout_seconds,
        structured_output=structured_output,
        max_output_tokens=max_output_tokens,
    )
