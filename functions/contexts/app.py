"""Management API (management key): contexts, their principals and the principals' keys."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import build_resolver, json_response, management, no_content, parse_body, query_param
from agent_memory.composition import get_services
from agent_memory.db.principal_store import PrincipalStore
from agent_memory.domain import contexts, tenancy
from agent_memory.models import ContextCreate, ContextPatch, KeyCreate, PrincipalCreate, PrincipalPatch
from agent_memory.observability import logger

app = build_resolver()


def _principals(context_id: str) -> PrincipalStore:
    """The principal store of an existing context (422 bad id, 404 unknown)."""
    services = get_services()
    contexts.existing_context(services.control, context_id)
    return services.principals(context_id)


def _ttl() -> int | None:
    return tenancy.parse_ttl(query_param(app, 'ttlSeconds') or query_param(app, 'ttl_seconds'))


# ---- contexts ---------------------------------------------------------------------------------------
@app.get('/api/v1/contexts')
def list_contexts() -> Any:
    management(app)
    return json_response(contexts.list_contexts(get_services().control))  # responds with an array


@app.post('/api/v1/contexts/<context_id>')
def create_context(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, ContextCreate)
    services = get_services()
    return json_response(contexts.create_context(services.control, services.store, context_id, request.config), 201)


@app.get('/api/v1/contexts/<context_id>')
def get_context(context_id: str) -> Any:
    management(app)
    return json_response(contexts.get_context(get_services().control, context_id))


@app.patch('/api/v1/contexts/<context_id>')
def patch_context(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, ContextPatch)
    return json_response(contexts.patch_context(get_services().control, context_id, request.config))


@app.delete('/api/v1/contexts/<context_id>')
def delete_context(context_id: str) -> Any:
    management(app)
    services = get_services()
    contexts.delete_context(services.control, context_id)
    services.drop_context(context_id)
    return no_content()


# ---- principals -------------------------------------------------------------------------------------
@app.post('/api/v1/contexts/<context_id>/principals')
def create_principal(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, PrincipalCreate)
    view, created = tenancy.create_principal(_principals(context_id), request)
    return json_response(view, 201 if created else 200)


@app.get('/api/v1/contexts/<context_id>/principals')
def list_principals(context_id: str) -> Any:
    management(app)
    return json_response([tenancy.principal_view(row) for row in _principals(context_id).list()])  # responds with an array


@app.get('/api/v1/contexts/<context_id>/principals/<principal_id>')
def get_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    return json_response(tenancy.principal_view(tenancy.get_principal(_principals(context_id), principal_id)))


@app.patch('/api/v1/contexts/<context_id>/principals/<principal_id>')
def patch_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, PrincipalPatch)
    return json_response(tenancy.update_principal(_principals(context_id), principal_id, request))


@app.delete('/api/v1/contexts/<context_id>/principals/<principal_id>')
def delete_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    tenancy.delete_principal(_principals(context_id), principal_id)
    return no_content()


# ---- a principal's keys -----------------------------------------------------------------------------
@app.get('/api/v1/contexts/<context_id>/principals/<principal_id>/keys')
def list_keys(context_id: str, principal_id: str) -> Any:
    management(app)
    return json_response(tenancy.list_keys(get_services().control, _principals(context_id), principal_id))  # responds with an array


@app.post('/api/v1/contexts/<context_id>/principals/<principal_id>/keys/<name>')
def mint_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    request, _ = parse_body(app, KeyCreate)
    principals = _principals(context_id)
    return json_response(tenancy.mint_key(get_services().control, principals, principal_id, name, request, _ttl()), 201)


@app.post('/api/v1/contexts/<context_id>/principals/<principal_id>/keys/<name>/rotate')
def rotate_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    _principals(context_id)
    return json_response(tenancy.rotate_key(get_services().control, context_id, principal_id, name, _ttl()))


@app.delete('/api/v1/contexts/<context_id>/principals/<principal_id>/keys/<name>')
def delete_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    _principals(context_id)
    tenancy.delete_key(get_services().control, context_id, principal_id, name)
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
