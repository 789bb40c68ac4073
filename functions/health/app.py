"""GET /api/v1/health — liveness and database reachability (no auth)."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import build_resolver, json_response
from agent_memory.api.services import get_services
from agent_memory.errors import AgentMemoryError
from agent_memory.observability import logger

app = build_resolver()


@app.get('/api/v1/health')
def health() -> Any:
    try:
        get_services().db.ping()
    except AgentMemoryError as exc:
        logger.warning('health check: database unreachable', extra={'error': exc.detail})
        response = json_response({'status': 'unavailable', 'db': 'unreachable'}, 503)
        response.headers['Retry-After'] = '5'
        return response
    return json_response({'status': 'ok', 'db': 'ok'})


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
