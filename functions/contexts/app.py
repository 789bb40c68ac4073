"""Management API (management key): create and read contexts, mint a principal's key."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import build_resolver, json_response, management, parse_body
from agent_memory.api.services import get_services
from agent_memory.domain import contexts
from agent_memory.domain.auth import check_context_id
from agent_memory.domain.context_config import effective_config
from agent_memory.errors import Forbidden, NotFound
from agent_memory.models import ContextCreate
from agent_memory.observability import logger

app = build_resolver()


@app.post('/api/v1/contexts/<context_id>')
def create_context(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, ContextCreate)
    services = get_services()
    return json_response(contexts.create_context(services.control, services.store, context_id, request.config), 201)


@app.get('/api/v1/contexts/<context_id>')
def get_context(context_id: str) -> Any:
    management(app)
    check_context_id(context_id)
    row = get_services().control.get_context(context_id)
    if row is None:
        raise NotFound('context not found')
    return json_response(
        {'id': context_id, 'config': effective_config(row.get('config')).model_dump(), 'createdAt': row['created_at'].isoformat()}
    )


@app.post('/api/v1/contexts/<context_id>/principals/<principal_id>/keys/<name>')
def mint_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    check_context_id(context_id)
    services = get_services()
    if services.control.get_context(context_id) is None:
        raise NotFound('context not found')
    if principal_id == 'system':
        raise Forbidden('the system principal cannot hold keys')
    if services.store(context_id).get_principal(principal_id) is None:
        raise NotFound('principal not found')
    secret = contexts.mint_context_key(services.control, context_id, principal_id, name)
    return json_response({'name': name, 'principalId': principal_id, 'secret': secret}, 201)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
