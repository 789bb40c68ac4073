"""GET /traces, /traces/stats, /traces/{id} — retrieval, response and decision traces."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, query_param
from agent_memory.domain import trace_views
from agent_memory.domain.params import parse_limit
from agent_memory.observability import logger

app = build_resolver()


@app.operation(routes.TRACES)
def list_traces(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    limit = parse_limit(query_param(app, 'limit'), default=50)
    return json_response(trace_views.list_traces(ports.trace_history, caller, limit, query_param(app, 'cursor')))


@app.operation(routes.TRACE_STATS)
def trace_stats(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(trace_views.stats(ports.trace_history, caller, query_param(app, 'windowHours')))


@app.operation(routes.TRACE)
def get_trace(context_id: str, trace_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(trace_views.get_trace(ports.trace_history, caller, trace_id))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
