"""Sessions: POST /sessions, GET /sessions/{id}/turns, DELETE /sessions/{id}."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, no_content, parse_body, query_param
from agent_memory.domain import session_api
from agent_memory.domain.params import MAX_OFFSET, parse_int, parse_limit
from agent_memory.models import SessionCreate
from agent_memory.observability import logger

app = build_resolver()


@app.operation(routes.SESSION_CREATE)
def create_session(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, SessionCreate)
    return json_response(session_api.create_session(ports.memory, caller, request), 201)


@app.operation(routes.SESSION_TURNS)
def list_turns(context_id: str, session_id: str) -> Any:
    caller, ports = data_plane(app, context_id, session_id)
    offset = parse_int(query_param(app, 'offset') or query_param(app, 'cursor'), 'offset', 0, MAX_OFFSET, 0)
    return json_response(session_api.list_turns(ports.memory, caller, session_id, parse_limit(query_param(app, 'limit')), offset))


@app.operation(routes.SESSION_CLOSE)
def close_session(context_id: str, session_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    session_api.close_session(ports.memory, caller, session_id)
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
