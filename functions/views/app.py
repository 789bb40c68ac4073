"""Memory views: GET /state, /profile, /uncertainty, /me, /inspect; POST /uncertainty/{id}/resolve; GET /api/v1/me."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, key_plane, parse_body, query_param
from agent_memory.composition import get_services
from agent_memory.domain import reads
from agent_memory.domain.params import parse_limit
from agent_memory.models import ResolveUncertainty
from agent_memory.observability import logger

app = build_resolver()


@app.operation(routes.STATE)
def state(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(reads.state(ports.reads, caller, parse_limit(query_param(app, 'limit'))))


@app.operation(routes.PROFILE)
def profile(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(reads.profile(ports.reads, caller))


@app.operation(routes.UNCERTAINTIES)
def uncertainty(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    limit = parse_limit(query_param(app, 'limit'))
    return json_response(reads.uncertainties(ports.reads, caller, query_param(app, 'resolved'), limit, query_param(app, 'cursor')))


@app.operation(routes.RESOLVE)
def resolve_uncertainty(context_id: str, uncertainty_id: str) -> Any:
    from agent_memory.domain import uncertainties  # the write planner, on the first resolve: the reads start without it

    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, ResolveUncertainty)
    return json_response(
        uncertainties.accept_value(
            ports.reads,
            ports.memory,
            get_services().embedder,
            caller,
            uncertainty_id,
            request.accepted_value,
        )
    )


@app.operation(routes.ME)
def me(context_id: str) -> Any:
    caller, _ = data_plane(app, context_id)
    return json_response(reads.me(caller))


@app.operation(routes.WHOAMI)
def whoami() -> Any:
    return json_response(reads.me(key_plane(app)))


@app.operation(routes.INSPECT)
def inspect(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    times = {name: query_param(app, name) for name in reads.INSPECT_TIME_PARAMS}
    return json_response(reads.inspect(ports, caller, query_param(app, 'ref'), times))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
