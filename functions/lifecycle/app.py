"""POST /lifecycle/{decay,expire,purge-traces,reindex} — run one sweep now for this context."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response
from agent_memory.composition import get_services
from agent_memory.domain import lifecycle
from agent_memory.observability import logger, metrics

app = build_resolver()


@app.operation(routes.SWEEP)
def run_sweep(context_id: str, sweep: str) -> Any:
    caller, _ = data_plane(app, context_id)
    requested = lifecycle.requested_sweep(caller, sweep)
    result = lifecycle.run_sweep(sweep, requested, get_services().lifecycle(context_id), context_id, caller.config)
    return json_response({'affected': result['affected'], 'ms': result['ms']})


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
