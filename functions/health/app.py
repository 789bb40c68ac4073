"""GET /api/v1/health — liveness and database reachability; GET /api/v1/openapi.json — the API description (no auth)."""

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, json_response
from agent_memory.composition import get_services
from agent_memory.domain.health import database_reachable
from agent_memory.observability import logger

app = build_resolver()


@app.operation(routes.HEALTH)
def health() -> Any:
    if not database_reachable(get_services().db):
        response = json_response({'status': 'unavailable', 'db': 'unreachable'}, 503)
        response.headers['Retry-After'] = '5'
        return response
    return json_response({'status': 'ok', 'db': 'ok'})


@app.operation(routes.OPENAPI)
def openapi() -> Any:
    return Response(status_code=200, content_type='application/json', body=openapi_document())


def openapi_document() -> str:
    """The committed infra/openapi/openapi.json (shipped in the layer), read once per container."""
    global _OPENAPI
    if _OPENAPI is None:
        from importlib import resources  # its import (tempfile, zipfile paths) is not paid by a health check

        _OPENAPI = resources.files('agent_memory.api').joinpath('openapi.json').read_text(encoding='utf-8')
    return _OPENAPI


_OPENAPI: str | None = None


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
