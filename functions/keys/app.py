"""Self-service keys (data plane): a context key lists, mints, rotates and deletes keys of its own principal."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, json_response, no_content, parse_body, query_param
from agent_memory.composition import get_services
from agent_memory.domain import principal_stores, tenancy
from agent_memory.models import SelfKeyCreate
from agent_memory.observability import logger

app = build_resolver()


def _ttl() -> int | None:
    return tenancy.parse_ttl(query_param(app, 'ttlSeconds') or query_param(app, 'ttl_seconds'))


@app.operation(routes.OWN_KEYS)
def list_keys(context_id: str) -> Any:
    caller, _ = data_plane(app, context_id)
    return json_response(tenancy.self_list_keys(get_services().control, caller))


@app.operation(routes.OWN_KEY_MINT)
def mint_key(context_id: str) -> Any:
    caller, _ = data_plane(app, context_id)
    request, _ = parse_body(app, SelfKeyCreate)
    return json_response(tenancy.self_mint_key(get_services().control, caller, request, _ttl()), 201)


@app.operation(routes.OWN_KEY_ROTATE)
def rotate_key(context_id: str, name: str) -> Any:
    caller, _ = data_plane(app, context_id)
    services = get_services()
    principals = principal_stores.of_caller(services.principals, caller)
    return json_response(tenancy.self_rotate_key(services.control, principals, caller, name, _ttl()))


@app.operation(routes.OWN_KEY_DELETE)
def delete_key(context_id: str, name: str) -> Any:
    caller, _ = data_plane(app, context_id)
    services = get_services()
    tenancy.self_delete_key(services.control, principal_stores.of_caller(services.principals, caller), caller, name)
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
