"""POST /mcp: the Streamable-HTTP MCP endpoint (stateless, JSON responses); GET and DELETE answer 405."""

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver
from agent_memory.composition import get_services
from agent_memory.config import get_settings
from agent_memory.domain.auth import Caller, authenticate_key
from agent_memory.mcp_server.http_bridge import serve_event
from agent_memory.mcp_server.server import CURRENT_CALLER, RequestAuth, build_server
from agent_memory.observability import logger, metrics

app = build_resolver()
server = build_server()
get_services().embedder.warm()  # recall, context and forget embed the query: load the model in the init phase


def _time_left(context: LambdaContext) -> float:
    """Seconds this request may take: the invocation's remaining time less a margin to answer in, at most 28 s."""
    return max(1.0, min(28.0, context.get_remaining_time_in_millis() / 1000 - 1.0))


def _caller() -> Caller:
    """The key's caller, or the same 401 problem+json as REST before any MCP parsing; every MCP request (initialize,
    tools/list, ping, tools/call, GET, DELETE) takes a rate-limit token, so 429 problem+json with Retry-After."""
    services = get_services()
    caller = authenticate_key(services.control, services.migrated, app.current_event.headers or {}, throttle=True)
    logger.append_keys(context=caller.context_id, principal=caller.principal_id)
    metrics.add_metric(name='McpRequests', unit=MetricUnit.Count, value=1)
    return caller


@app.operation(routes.MCP)
def mcp() -> Any:
    event = app.current_event
    headers = dict(event.headers or {})
    caller = _caller()
    token = CURRENT_CALLER.set(RequestAuth(caller, headers, event.request_context.request_id))
    try:
        answer = serve_event(server, event.raw_event, get_settings().max_body_bytes, _time_left(app.lambda_context))
    finally:
        CURRENT_CALLER.reset(token)
    content_type = answer.headers.pop('content-type', 'text/plain; charset=utf-8')  # the SDK's bare-text 400s
    if not answer.body:  # a notification's 202: the SDK labels its empty body JSON, which no JSON parser accepts
        return Response(status_code=answer.status, body='', headers=answer.headers)
    return Response(status_code=answer.status, content_type=content_type, body=answer.body.decode(), headers=answer.headers)


@app.operation(routes.MCP_GET)
@app.operation(routes.MCP_DELETE)
def mcp_other() -> Any:
    _caller()
    # Stateless: no server-initiated stream to GET and no session to DELETE (MCP Streamable HTTP allows 405 for both).
    return Response(status_code=405, content_type='application/json', body='{"message": "use POST"}', headers={'Allow': 'POST'})


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
