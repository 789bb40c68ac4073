"""Entities: list, read, attribute history, soft delete."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, no_content, query_param
from agent_memory.domain import entity_deletion, reads
from agent_memory.domain.params import parse_limit
from agent_memory.observability import logger

app = build_resolver()


@app.operation(routes.ENTITIES)
def list_entities(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    limit = parse_limit(query_param(app, 'limit'))
    return json_response(reads.list_entities(ports.reads, caller, query_param(app, 'type'), limit, query_param(app, 'cursor')))


@app.operation(routes.ENTITY)
def get_entity(context_id: str, entity_type: str, name: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(reads.get_entity(ports.reads, caller, entity_type, name))


@app.operation(routes.HISTORY)
def history(context_id: str, entity_type: str, name: str, key: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(reads.history(ports.reads, caller, entity_type, name, key))


@app.operation(routes.ENTITY_DELETE)
def delete_entity(context_id: str, entity_type: str, name: str) -> Any:
    caller, ports = data_plane(app, context_id)
    entity_deletion.delete_entity(ports.reads, ports.memory, caller, entity_type, name)
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
