"""POST /lifecycle/{decay,expire,purge-traces} — run one sweep now for this context."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import build_resolver, data_plane, json_response
from agent_memory.composition import get_services
from agent_memory.domain import lifecycle
from agent_memory.observability import logger, metrics

app = build_resolver()


@app.post('/api/v1/<context_id>/lifecycle/<sweep>')
def run_sweep(context_id: str, sweep: str) -> Any:
    caller, _ = data_plane(app, context_id)
    return json_response(lifecycle.run_requested(caller, sweep, get_services().lifecycle(context_id)))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
