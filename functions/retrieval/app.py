"""POST /query, /context, /sessions/{id}/context, /reflect (fresh retrieval, never the response cache) and /forget."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, parse_body
from agent_memory.composition import get_services
from agent_memory.domain import recall, session_context
from agent_memory.models import ContextRequest, ForgetRequest, QueryRequest, ReflectRequest, SessionContextRequest
from agent_memory.observability import logger, metrics

app = build_resolver()
get_services().embedder.warm()  # load the model in the init phase, not on the first request


@app.operation(routes.QUERY)
def query(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, QueryRequest)
    return json_response(recall.query(ports, get_services().embedder, caller, request))


@app.operation(routes.CONTEXT)
def context(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, ContextRequest)
    return json_response(recall.context(ports, get_services().embedder, caller, request))


@app.operation(routes.SESSION_CONTEXT)
def context_for_session(context_id: str, session_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, SessionContextRequest)
    return json_response(session_context.render(ports, get_services().embedder, caller, session_id, request))


@app.operation(routes.REFLECT)
def reflect_(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, ReflectRequest)
    services = get_services()
    from agent_memory.domain import reflect  # reflect pulls in ingest and synthesis: only its own route pays for them

    return json_response(reflect.reflect(ports.memory, services.embedder, services.synthesizer(), services.pipeline(), caller, request))


@app.operation(routes.FORGET)
def forget_(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, ForgetRequest)
    from agent_memory.domain import forget  # forget pulls in the forget store's writes: only its own route pays for them

    return json_response(forget.forget(ports.memory, get_services().embedder, caller, request))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
