"""HTTP plumbing shared by every API function: the resolver, problem+json errors, body parsing, auth."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response

from agent_memory.api.json_input import load_json
from agent_memory.api.routes import Operation
from agent_memory.composition import get_services
from agent_memory.config import get_settings
from agent_memory.errors import AgentMemoryError, BadRequest, PayloadTooLarge
from agent_memory.observability import logger
from agent_memory.public_errors import public_detail, request_ref
from agent_memory.wire_numbers import rounded

if TYPE_CHECKING:  # authentication and pydantic are imported by the first call that needs them: /health does not
    from pydantic import BaseModel

    from agent_memory.domain.auth import Caller
    from agent_memory.domain.ports import ContextPorts

PROBLEM_JSON = 'application/problem+json'
M = TypeVar('M', bound='BaseModel')
F = TypeVar('F', bound=Callable[..., Any])


def problem(app: APIGatewayHttpResolver, status: int, title: str, detail: str, slug: str,
            retry_after: int | None = None) -> Response[str]:  # fmt: skip
    event = app.current_event
    body = {
        'type': f'https://agent-memory.dev/errors/{slug}',
        'title': title,
        'status': status,
        'detail': detail,
        'instance': event.raw_path if event else None,
        'message': detail,
    }
    headers = {'Retry-After': str(retry_after)} if retry_after else {}
    return Response(status_code=status, content_type=PROBLEM_JSON, body=json.dumps(body), headers=headers)


class Resolver(APIGatewayHttpResolver):
    """Routes are registered from ``api.routes`` operations (``@app.operation(routes.QUERY)``), which the OpenAPI
    document is generated from; ``operations`` lists what this function serves.

    Route parameters come from the event's ``pathParameters`` (decoded by API Gateway, and by the local
    gateway), not from matching the route on ``rawPath``: how ``rawPath`` is encoded differs between API Gateway
    flavours, and ``/traces/retrieval_trace%3A01…`` or ``/entities/person/Ada%20Lovelace`` must mean one thing."""

    def __init__(self) -> None:
        super().__init__(strip_prefixes=None)
        self.operations: list[Operation] = []

    def operation(self, op: Operation) -> Callable[[F], F]:
        self.operations.append(op)
        register: Callable[[F], F] = self.route(op.rule, op.method)
        return register

    @staticmethod
    def _compile_regex(rule: str, base_regex: str = '^{}$') -> re.Pattern[str]:
        """A parameter matches any one path segment. Powertools' own pattern leaves out characters such as ``#``,
        ``?``, ``"``, ``€`` or control characters, which arrive decoded (``/entities/language/C%23`` is ``C#``): such a
        path answered 404 "no such route" instead of reaching the handler's own 404/422."""
        return re.compile(base_regex.format(re.sub(r'<(\w+)>', r'(?P<\1>[^/]+)', rule)))

    def _convert_matches_into_route_keys(self, match: re.Match[str]) -> dict[str, str]:
        given = self.current_event.path_parameters or {}
        return {name: given.get(name, value) for name, value in match.groupdict().items()}


def build_resolver() -> Resolver:
    app = Resolver()

    @app.exception_handler(AgentMemoryError)  # type: ignore[untyped-decorator]  # Powertools leaves it untyped
    def _domain_error(exc: AgentMemoryError) -> Response[str]:
        return problem(app, exc.status, exc.title, public_detail(exc, _request_id(app)), exc.slug, exc.retry_after)

    @app.exception_handler(Exception)  # type: ignore[untyped-decorator]  # Powertools leaves it untyped
    def _unexpected(exc: Exception) -> Response[str]:
        logger.exception('unhandled error')
        return problem(app, 500, 'Internal error', request_ref(_request_id(app)), 'internal')

    @app.not_found
    def _no_route(exc: Exception) -> Response[str]:
        return problem(app, 404, 'Not found', 'no such route', 'not-found')

    return app


def _request_id(app: APIGatewayHttpResolver) -> str:
    return app.current_event.request_context.request_id if app.current_event else 'unknown'


def json_response(body: Any, status: int = 200) -> Response[str]:
    return Response(status_code=status, content_type='application/json', body=json.dumps(rounded(body)))


def no_content() -> Response[str]:
    return Response(status_code=204, body='')


def raw_json_body(app: APIGatewayHttpResolver) -> Any:
    event = app.current_event
    try:
        body = (event.decoded_body or '') if event.body is not None else ''
    except (UnicodeDecodeError, ValueError) as exc:  # base64 bytes that are not UTF-8 text
        raise BadRequest('request body must be UTF-8 JSON') from exc
    if len(body.encode()) > get_settings().max_body_bytes:
        raise PayloadTooLarge(f'request body exceeds {get_settings().max_body_bytes} bytes')
    if not body.strip():
        return {}
    value = load_json(body)
    if not isinstance(value, dict):
        raise BadRequest('request body must be a JSON object')
    return value


# A top-level-looking ``"sessionId": "<id>"`` (or ``session_id``) in the raw text. Inside a JSON string the quotes are
# escaped, so text that merely mentions the key does not match; a match in a nested object is only a wrong guess, which
# the domain notices (the id differs from the parsed one) and reads the session again.
_SESSION_KEY = re.compile(r'"session(?:Id|_id)"\s*:\s*"([A-Za-z0-9_.:-]{1,128})"')


def peek_session_id(app: APIGatewayHttpResolver) -> str | None:
    """The body's ``sessionId`` before authentication, only to read that session in the same round trip. Nothing is
    parsed before the key is checked (a 1 MiB body cost ~160 ms of JSON parsing for any caller, key or not): this is
    one linear scan of the raw text, and any problem with the body is left for ``parse_body`` after authentication."""
    event = app.current_event
    try:
        body = (event.decoded_body or '') if event.body is not None else ''
    except (UnicodeDecodeError, ValueError):
        return None
    if len(body) > get_settings().max_body_bytes:
        return None
    found = _SESSION_KEY.search(body)
    return found.group(1) if found else None


def parse_body(app: APIGatewayHttpResolver, model: type[M]) -> tuple[M, Any]:
    from pydantic import ValidationError

    raw = raw_json_body(app)
    try:
        return model.model_validate(raw), raw
    except ValidationError as exc:
        problems = '; '.join(f'{".".join(str(p) for p in e["loc"]) or "body"}: {e["msg"]}' for e in exc.errors())
        raise BadRequest(problems) from exc


def header(app: APIGatewayHttpResolver, name: str) -> str | None:
    headers = app.current_event.headers or {}
    return next((v for k, v in headers.items() if k.lower() == name.lower()), None)


def query_param(app: APIGatewayHttpResolver, name: str) -> str | None:
    return (app.current_event.query_string_parameters or {}).get(name)


def data_plane(app: APIGatewayHttpResolver, context_id: str, session_id: str | None = None) -> tuple[Caller, ContextPorts]:
    """Validate the context id (422), authenticate (401), rate-limit (429), apply a GET ``lens``;
    return the caller with its context's ports. A ``session_id`` the route will look up is read in the same round trip."""
    from agent_memory.domain.auth import authenticate, check_context_id
    from agent_memory.domain.visibility import parse_lens, with_lens

    check_context_id(context_id)
    services = get_services()
    headers = app.current_event.headers or {}
    caller = authenticate(services.control, services.migrated, headers, context_id, throttle=True, session_id=session_id)
    logger.append_keys(context=context_id, principal=caller.principal_id, acting_principal=caller.acting_principal_id)
    if app.current_event.http_method == 'GET':
        caller = with_lens(caller, parse_lens(query_param(app, 'lens')))
    return caller, services.context(context_id)


def key_plane(app: APIGatewayHttpResolver) -> Caller:
    """Authenticate (401) and rate-limit (429) a data-plane key without a context in the path: its own context."""
    from agent_memory.domain.auth import authenticate_key

    services = get_services()
    caller = authenticate_key(services.control, services.migrated, app.current_event.headers or {}, throttle=True)
    logger.append_keys(context=caller.context_id, principal=caller.principal_id, acting_principal=caller.acting_principal_id)
    return caller


def management(app: APIGatewayHttpResolver) -> None:
    from agent_memory.domain.auth import authenticate_management

    authenticate_management(get_services().control, app.current_event.headers or {})
