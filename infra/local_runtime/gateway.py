"""A local stand-in for API Gateway HTTP API: real HTTP in, payload v2 events to the real handlers."""

from __future__ import annotations

import base64
import importlib.util
import json
import re
import sys
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

from local_runtime import api_reference
from local_runtime.console import request_line
from local_runtime.events import LocalContext, http_event
from local_runtime.template_routes import Route

MAX_READ_BYTES = 16 * 1024 * 1024
READ_TIMEOUT_SECONDS = 30.0  # a client that announces more body than it sends is cut off, not waited for forever
_CONTENT_LENGTH = re.compile(r'[0-9]{1,18}')


class HandlerRegistry:
    """Loads each function folder's ``app.py`` once, like a warm Lambda container.

    A Lambda container handles one invocation at a time and Powertools resolvers keep the current
    event on the resolver, so invocations of one function are serialised here too.
    """

    def __init__(self) -> None:
        self._modules: dict[Path, ModuleType] = {}
        self._busy: dict[Path, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, code_dir: Path) -> ModuleType:
        with self._lock:
            module = self._modules.get(code_dir)
            if module is None:
                spec = importlib.util.spec_from_file_location(f'fn_{code_dir.name}_app', code_dir / 'app.py')
                if spec is None or spec.loader is None:
                    raise RuntimeError(f'cannot load {code_dir / "app.py"}')
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                self._modules[code_dir] = module
                self._busy[code_dir] = threading.Lock()
            return module

    def invoke(self, code_dir: Path, event: dict[str, Any]) -> Any:
        module = self.get(code_dir)
        with self._busy[code_dir]:
            return module.lambda_handler(event, LocalContext(function_name=code_dir.name))


def _problem(status: int, detail: str, path: str, title: str = 'Not found', slug: str = 'not-found') -> tuple[int, dict[str, str], bytes]:
    body = {
        'type': f'https://agent-memory.dev/errors/{slug}',
        'title': title,
        'status': status,
        'detail': detail,
        'instance': path,
        'message': detail,
    }
    return status, {'content-type': 'application/problem+json'}, json.dumps(body).encode()


Match = tuple[Route, dict[str, str]]  # the route and its path parameters, decoded


def matched(routes: list[Route], method: str, target: str) -> Match | None:
    path = urlsplit(target).path
    for route in routes:
        params = route.match(method, path)
        if params is not None:
            return route, {k: unquote(v) for k, v in params.items()}
    return None


def dispatch(match: Match | None, registry: HandlerRegistry, method: str, target: str, headers: dict[str, str],
             body: bytes | None) -> tuple[int, dict[str, str], bytes]:  # fmt: skip
    url = urlsplit(target)
    if (page := api_reference.serve(method, url.path)) is not None:
        return page
    if match is not None:
        route, decoded = match
        payload: Any = None
        if body:
            try:
                payload = body.decode()
            except UnicodeDecodeError:
                payload = body
        event = http_event(
            method,
            unquote(url.path),  # as API Gateway HTTP APIs deliver rawPath: decoded (the parameters come decoded too)
            route_key=f'{route.method} {route.path}',
            path_parameters=decoded,
            body=payload,
            headers=headers,
            query=url.query,
        )
        result = registry.invoke(route.code_dir, event)
        raw = result.get('body') or ''
        data = base64.b64decode(raw) if result.get('isBase64Encoded') else raw.encode()
        out_headers = {k.lower(): str(v) for k, v in (result.get('headers') or {}).items()}
        return int(result.get('statusCode', 200)), out_headers, data
    return _problem(404, f'no route for {method} {url.path}', url.path)


def make_server(host: str, port: int, routes: list[Route], registry: HandlerRegistry) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.1'
        server_version = 'agent-memory-local'

        timeout = READ_TIMEOUT_SECONDS  # socket timeout for every read of this connection
        started = 0.0
        match: Match | None = None

        def _serve(self) -> None:
            self.started = time.perf_counter()
            self.match = None
            if self.headers.get('transfer-encoding'):  # a chunked body is not read: its bytes would poison the connection
                self._refuse(*_problem(411, 'send the body with a Content-Length', self.path, 'Length required', 'length-required'))
                return
            lengths = self.headers.get_all('content-length') or ['0']
            raw_length = lengths[0].strip()
            if len(lengths) > 1 or not _CONTENT_LENGTH.fullmatch(raw_length):  # -1, 1e3, garbage, two: cannot be framed
                self._refuse(*_problem(400, 'invalid Content-Length', self.path, 'Bad request', 'bad-request'))
                return
            length = int(raw_length)
            if length > MAX_READ_BYTES:
                self._refuse(*_problem(413, 'request body too large', self.path, 'Payload too large', 'payload-too-large'))
                return
            body = self.rfile.read(length) if length else None
            try:
                self.match = matched(routes, self.command, self.path)
                status, headers, data = dispatch(self.match, registry, self.command, self.path, dict(self.headers.items()), body)
            except Exception:  # like API Gateway when a function crashes: a 500, never a dropped connection
                traceback.print_exc(file=sys.stderr)
                status, headers, data = 500, {'content-type': 'application/json'}, b'{"message":"Internal Server Error"}'
            self._send(status, headers, data)

        def _refuse(self, status: int, headers: dict[str, str], data: bytes) -> None:
            """Answer without reading the body, then close: what follows on the connection cannot be trusted."""
            self.close_connection = True
            self._send(status, {**headers, 'connection': 'close'}, data)

        def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
            self.send_response(status)
            for key, value in headers.items():
                if key != 'content-length':
                    self.send_header(key, value)
            self.send_header('content-length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            ms = (time.perf_counter() - self.started) * 1000
            context = self.match[1].get('context_id') if self.match else None
            print(request_line(self.command, self.path, status, ms, context, headers, data), flush=True)

        do_GET = do_POST = do_DELETE = do_PATCH = do_PUT = _serve

        def __getattr__(self, name: str) -> Any:
            # Any other method (TRACE, QUERY, …) gets the same 404 problem as an undeclared path, as API Gateway
            # HTTP APIs answer, instead of http.server's 501 HTML page.
            if name.startswith('do_'):
                return self._serve
            raise AttributeError(name)

        def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
            return

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server
