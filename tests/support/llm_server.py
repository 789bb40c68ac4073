"""A scriptable OpenAI-compatible chat-completions server on 127.0.0.1, for tests of the LLM stage.

Real HTTP, so the real ``openai`` client (which speaks ``httpx2``; respx cannot intercept it) is exercised
end to end: serialisation, headers, status-code mapping and timeouts.

    server.reply_json({...})        # 200, the object as the assistant message content
    server.reply_text('not json')   # 200, raw text as the content
    server.error(429)               # an OpenAI-style error body (+ Retry-After on 429)
    server.stall()                  # answer nothing for STALL_NEVER s (a stop cuts it short): outlasts any client timeout
    server.latency = 0.5            # every completion takes 0.5 s (a simulated model, for benchmarks)
    server.echo_sources = True      # an unscripted chat request answers citing every [S#] it was given

Modes that reproduce real OpenAI-compatible servers (they apply to every chat request, scripted or not):

    server.refuse_formats('json_schema')                   # llama-cpp-python: HTTP 500 with a validation body
    server.refuse_formats('json_schema', 'json_object', status=400)  # a server without structured output
    server.prose = True             # content arrives wrapped in prose ("Sure! Here is the JSON: {...} Hope ...")
    server.markers = False          # content never carries [S#] citation markers (small local models)
    server.validation_error()       # scripted: one HTTP 500 whose body is a request-validation error
    server.busy = True              # llama-cpp-python while another request waits for the model (its default
                                    # interrupt_requests): a streamed completion ends with [DONE] after its role chunk
    server.context_tokens = 4096    # a prompt longer than that (counted as 4 characters a token) is refused with
                                    # llama-cpp-python's HTTP 400 context_length_exceeded body, before the script

``stream: true`` requests get the same content as server-sent ``chat.completion.chunk`` frames (one per
word, then a usage frame and ``[DONE]``). ``POST /v1/embeddings`` answers deterministic unit vectors of
``embedding_dimension`` derived from each input's hash (a stand-in provider; not a semantic model);
``server.embedding_values = [...]`` makes every input's embedding that exact JSON value instead (a broken provider:
NaN, zeros, nested lists, strings).

Each request consumes the next scripted behaviour (an unscripted request gets a 500 saying so) and is
recorded in ``server.requests`` with its path, lower-cased headers and parsed JSON body.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_ERRORS: dict[int, tuple[str, str | None, str]] = {
    400: ('invalid_request_error', None, 'Invalid request.'),
    403: ('invalid_request_error', None, 'You are not allowed to use this model.'),
    401: ('invalid_request_error', 'invalid_api_key', 'Incorrect API key provided.'),
    404: ('invalid_request_error', 'model_not_found', 'The model does not exist or you do not have access to it.'),
    429: ('requests', 'rate_limit_exceeded', 'Rate limit reached for requests. Please try again in 20ms.'),
    500: ('server_error', None, 'The server had an error while processing your request.'),
    503: ('server_error', None, 'The engine is currently overloaded, please try again later.'),
}


# A stall no client timeout in the tests comes near: only a broken timeout waits it out, and then the test fails (the
# late answer is an empty object) instead of hanging.
STALL_NEVER = 120.0


@dataclass(frozen=True)
class Behaviour:
    kind: str  # content | raw | error | stall
    content: str = ''
    status: int = 200
    message: str | None = None
    seconds: float = 0.0
    code: str | None = None  # an error's machine-readable code


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get('messages', []))

    def message(self, role: str, index: int = 0) -> str:
        """The content of the ``index``-th message with that role."""
        return str([m for m in self.messages if m.get('role') == role][index]['content'])


@dataclass
class LlmTestServer:
    host: str = '127.0.0.1'
    latency: float = 0.0
    echo_sources: bool = False
    prose: bool = False
    markers: bool = True
    busy: bool = False
    context_tokens: int | None = None
    embedding_dimension: int = 8
    embedding_values: Any = None
    requests: list[RecordedRequest] = field(default_factory=list)
    _refused: dict[str, int] = field(default_factory=dict)  # response_format type -> status answered
    _script: deque[Behaviour] = field(default_factory=deque)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stopping: threading.Event = field(default_factory=threading.Event)
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _httpd: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    # -- scripting ------------------------------------------------------------------------------------------------

    def reply_json(self, payload: Any) -> LlmTestServer:
        return self.reply_text(json.dumps(payload))

    def reply_text(self, content: str) -> LlmTestServer:
        return self._push(Behaviour('content', content=content))

    def reply_raw(self, body: str, content_type: str = 'text/html', status: int = 200) -> LlmTestServer:
        """A response that is not a chat completion at all (e.g. what a wrong base URL serves)."""
        return self._push(Behaviour('raw', content=body, status=status, message=content_type))

    def error(self, status: int, message: str | None = None) -> LlmTestServer:
        return self._push(Behaviour('error', status=status, message=message))

    def validation_error(self) -> LlmTestServer:
        """One HTTP 500 whose body reports a request-validation error, with a server file path in it (as
        llama-cpp-python's server answers a request it cannot parse)."""
        return self._push(Behaviour('error', status=500, message=VALIDATION_MESSAGE))

    def refuse_formats(self, *formats: str, status: int = 500) -> LlmTestServer:
        """Every later request with one of these ``response_format`` types is refused (500: with a validation body)."""
        with self._lock:
            self._refused.update(dict.fromkeys(formats, status))
        return self

    def stall(self, seconds: float = STALL_NEVER) -> LlmTestServer:
        return self._push(Behaviour('stall', seconds=seconds))

    def _push(self, behaviour: Behaviour) -> LlmTestServer:
        with self._lock:
            self._script.append(behaviour)
        return self

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._script)

    # -- lifecycle ------------------------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        assert self._httpd is not None, 'server not started'
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f'http://{self.host}:{self.port}/v1'

    def start(self) -> LlmTestServer:
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer((self.host, 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # keep-alive handler threads may sit on an idle pooled connection
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), name='llm-test-server', daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # cuts stalls short
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # -- request handling -----------------------------------------------------------------------------------------

    @property
    def chat_calls(self) -> int:
        with self._lock:
            return sum(1 for r in self.requests if r.path.rstrip('/') == '/v1/chat/completions')

    def _next(self, request: RecordedRequest) -> Behaviour:
        response_format = request.body.get('response_format') or {}
        with self._lock:
            self.requests.append(request)
            refused = self._refused.get(str(response_format.get('type')))
            if refused is not None:  # refused before the script is consulted, as a real server would
                message = VALIDATION_MESSAGE if refused == 500 else f'response_format type {response_format.get("type")!r} is not supported'
                return Behaviour('error', status=refused, message=message)
            prompt_tokens = sum(len(str(m.get('content', ''))) for m in request.messages) // 4
            if self.context_tokens is not None and prompt_tokens >= self.context_tokens:
                message = CONTEXT_MESSAGE.format(window=self.context_tokens, prompt=prompt_tokens)
                return Behaviour('error', status=400, message=message, code='context_length_exceeded')
            behaviour = self._script.popleft() if self._script else None
        if behaviour is None and self.echo_sources:
            markers = sorted(set(re.findall(r'\[S\d+\]', json.dumps(request.body.get('messages', [])))), key=lambda m: int(m[2:-1]))
            behaviour = Behaviour('content', content=f'Answer from memory {" ".join(markers)}.'.replace('  ', ' '))
        if behaviour is None:
            return Behaviour('error', status=500, message='no behaviour scripted for this request')
        return self._as_served(behaviour)

    def _as_served(self, behaviour: Behaviour) -> Behaviour:
        if behaviour.kind != 'content':
            return behaviour
        content = behaviour.content if self.markers else re.sub(r'\s*\[S\d+\]', '', behaviour.content)
        if self.prose:
            content = f'Sure! Here is the JSON you asked for:\n{content}\nLet me know if you need anything else.'
        return Behaviour('content', content=content)

    def _embeddings(self, body: dict[str, Any]) -> dict[str, Any]:
        inputs = body.get('input')
        texts = [inputs] if isinstance(inputs, str) else list(inputs or [])
        data = []
        for index, text in enumerate(texts):
            digest = hashlib.sha256(str(text).encode()).digest()
            while len(digest) < self.embedding_dimension:  # more than 32 dimensions: the hash chained on
                digest += hashlib.sha256(digest).digest()
            vector = [(b - 127.5) / 127.5 for b in digest[: self.embedding_dimension]]
            answered = vector if self.embedding_values is None else self.embedding_values
            data.append({'object': 'embedding', 'index': index, 'embedding': answered})
        usage = {'prompt_tokens': len(texts), 'total_tokens': len(texts)}
        return {'object': 'list', 'data': data, 'model': body.get('model'), 'usage': usage}

    def _completion(self, model: str, content: str) -> dict[str, Any]:
        return {
            'id': f'chatcmpl-test-{next(self._ids)}',
            'object': 'chat.completion',
            'created': int(time.time()),
            'model': model,
            'system_fingerprint': None,
            'choices': [
                {
                    'index': 0,
                    'message': {'role': 'assistant', 'content': content, 'refusal': None},
                    'logprobs': None,
                    'finish_reason': 'stop',
                }
            ],
            'usage': {
                'prompt_tokens': 100,
                'completion_tokens': max(1, len(content) // 4),
                'total_tokens': 100 + max(1, len(content) // 4),
            },
        }


class _Handler(BaseHTTPRequestHandler):
    owner: LlmTestServer
    protocol_version = 'HTTP/1.1'

    def log_message(self, format: str, *args: Any) -> None:  # the base class's signature
        pass  # keep the test output clean

    def do_POST(self) -> None:  # http.server's naming
        raw = self.rfile.read(int(self.headers.get('content-length') or 0))
        try:
            body = json.loads(raw or b'{}')
        except json.JSONDecodeError:
            body = {'_unparsed': raw.decode('utf-8', 'replace')}
        request = RecordedRequest('POST', self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        if self.path.rstrip('/') == '/v1/embeddings':
            with self.owner._lock:
                self.owner.requests.append(request)
            self._send(200, self.owner._embeddings(body))
            return
        if self.path.rstrip('/') != '/v1/chat/completions':
            self._send(404, _error_body(404, f'Unknown path {self.path}'))
            return
        behaviour = self.owner._next(request)
        if behaviour.kind == 'stall':
            self.owner._stopping.wait(behaviour.seconds)
            self._send(200, self.owner._completion(str(body.get('model')), '{}'))
        elif behaviour.kind == 'raw':
            self._send_bytes(behaviour.status, behaviour.content.encode(), behaviour.message or 'text/html')
        elif behaviour.kind == 'error':
            headers = {'retry-after': '1', 'x-ratelimit-remaining-requests': '0'} if behaviour.status == 429 else {}
            self._send(behaviour.status, _error_body(behaviour.status, behaviour.message, behaviour.code), headers)
        else:
            if self.owner.latency:
                self.owner._stopping.wait(self.owner.latency)
            completion = self.owner._completion(str(body.get('model')), behaviour.content)
            if body.get('stream'):
                self._stream(completion)
            else:
                self._send(200, completion)

    def _stream(self, completion: dict[str, Any]) -> None:
        content = completion['choices'][0]['message']['content']
        base = {'id': completion['id'], 'object': 'chat.completion.chunk', 'created': completion['created'], 'model': completion['model']}
        frames = [{**base, 'choices': [{'index': 0, 'delta': {'role': 'assistant'}, 'finish_reason': None}]}]
        if not self.owner.busy:  # busy: interrupted after the role chunk, no error, no finish_reason
            frames += [
                {**base, 'choices': [{'index': 0, 'delta': {'content': piece}, 'finish_reason': None}]}
                for piece in re.findall(r'\S+\s*', content)
            ]
            frames.append({**base, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': 'stop'}]})
            frames.append({**base, 'choices': [], 'usage': completion['usage']})
        data = ''.join(f'data: {json.dumps(f)}\n\n' for f in frames) + 'data: [DONE]\n\n'
        self._send_bytes(200, data.encode(), 'text/event-stream')

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        self._send_bytes(status, json.dumps(payload).encode(), 'application/json', headers)

    def _send_bytes(self, status: int, data: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header('content-type', content_type)
            self.send_header('content-length', str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test): nothing to answer


VALIDATION_MESSAGE = (
    '1 validation error for CreateChatCompletionRequest\nresponse_format.type\n'
    "  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]\n"
    '  File "/opt/venv/lib/python3.11/site-packages/llama_cpp/server/app.py", line 507, in create_chat_completion'
)


# llama-cpp-python's words (llama_cpp/server/errors.py), with the code OpenAI uses too.
CONTEXT_MESSAGE = (
    "This model's maximum context length is {window} tokens. However, you requested {prompt} tokens ({prompt} in the messages, "
    'None in the completion). Please reduce the length of the messages or completion.'
)


def _error_body(status: int, message: str | None = None, code: str | None = None) -> dict[str, Any]:
    kind, known_code, default = _ERRORS.get(status, ('server_error' if status >= 500 else 'invalid_request_error', None, f'HTTP {status}'))
    return {'error': {'message': message or default, 'type': kind, 'param': None, 'code': code or known_code}}
