"""Management API (management key): contexts, their principals and the principals' keys; export and restore."""

from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, json_response, management, no_content, parse_body, query_param, raw_json_body
from agent_memory.clock import utcnow
from agent_memory.composition import Services, get_services
from agent_memory.domain import contexts, principal_stores, tenancy
from agent_memory.domain.params import parse_flag
from agent_memory.domain.ports import Principals
from agent_memory.models import ContextCreate, ContextPatch, ImportRecords, KeyCreate, PrincipalCreate, PrincipalPatch
from agent_memory.observability import logger

app = build_resolver()


def _principals(context_id: str) -> Principals:
    """The principal store of an existing context (422 bad id, 404 unknown)."""
    services = get_services()
    return principal_stores.of_existing_context(services.control, services.principals, context_id)


def _ttl() -> int | None:
    return tenancy.parse_ttl(query_param(app, 'ttlSeconds') or query_param(app, 'ttl_seconds'))


# ---- contexts ---------------------------------------------------------------------------------------
@app.operation(routes.CONTEXTS)
def list_contexts() -> Any:
    management(app)
    return json_response(contexts.list_contexts(get_services().control))


@app.operation(routes.CONTEXT_CREATE)
def create_context(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, ContextCreate)
    services = get_services()
    admin = {'admin_display_name': request.admin_display_name, 'admin_external_id': request.admin_external_id}
    view = contexts.create_context(services.control, services.store, context_id, request.config, description=request.description, **admin)
    return json_response(view, 201)


@app.operation(routes.CONTEXT_GET)
def get_context(context_id: str) -> Any:
    management(app)
    return json_response(contexts.get_context(get_services().control, context_id))


@app.operation(routes.CONTEXT_PATCH)
def patch_context(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, ContextPatch)
    return json_response(contexts.patch_context(get_services().control, context_id, request.config))


@app.operation(routes.CONTEXT_DELETE)
def delete_context(context_id: str) -> Any:
    management(app)
    services = get_services()
    contexts.delete_context(services.control, context_id)
    services.drop_context(context_id)
    return no_content()


# ---- principals -------------------------------------------------------------------------------------
@app.operation(routes.PRINCIPAL_CREATE)
def create_principal(context_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, PrincipalCreate)
    view, created = tenancy.create_principal(_principals(context_id), request)
    return json_response(view, 201 if created else 200)


@app.operation(routes.PRINCIPALS)
def list_principals(context_id: str) -> Any:
    management(app)
    return json_response([tenancy.principal_view(row) for row in _principals(context_id).list()])


@app.operation(routes.PRINCIPAL_GET)
def get_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    return json_response(tenancy.principal_view(tenancy.get_principal(_principals(context_id), principal_id)))


@app.operation(routes.PRINCIPAL_PATCH)
def patch_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    request, _ = parse_body(app, PrincipalPatch)
    return json_response(tenancy.update_principal(_principals(context_id), principal_id, request))


@app.operation(routes.PRINCIPAL_DELETE)
def delete_principal(context_id: str, principal_id: str) -> Any:
    management(app)
    tenancy.delete_principal(_principals(context_id), principal_id)
    return no_content()


# ---- a principal's keys -----------------------------------------------------------------------------
@app.operation(routes.KEYS)
def list_keys(context_id: str, principal_id: str) -> Any:
    management(app)
    return json_response(tenancy.list_keys(get_services().control, _principals(context_id), principal_id))


@app.operation(routes.KEY_MINT)
def mint_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    request, _ = parse_body(app, KeyCreate)
    principals = _principals(context_id)
    return json_response(tenancy.mint_key(get_services().control, principals, principal_id, name, request, _ttl()), 201)


@app.operation(routes.KEY_ROTATE)
def rotate_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    _principals(context_id)
    return json_response(tenancy.rotate_key(get_services().control, context_id, principal_id, name, _ttl()))


@app.operation(routes.KEY_DELETE)
def delete_key(context_id: str, principal_id: str, name: str) -> Any:
    management(app)
    _principals(context_id)
    tenancy.delete_key(get_services().control, context_id, principal_id, name)
    return no_content()


# ---- export and restore (docs/backup-format.md) ------------------------------------------------------
# The backup module (the export format, the staging store) is imported by these routes only, not on a cold start.
def _embedding(services: Services) -> tuple[str, int]:
    return services.embedder.model_id, services.embedder.dimension


@app.operation(routes.EXPORT)
def export_context(context_id: str) -> Any:
    from agent_memory.domain import backup

    management(app)
    services = get_services()
    cursor, traces = query_param(app, 'cursor'), parse_flag(query_param(app, 'traces'), 'traces')
    page, after = backup.export_page(services.control, services.context, _embedding(services), context_id, cursor, traces, utcnow())
    return Response(200, content_type=routes.NDJSON, body=page, headers={'X-Next-Cursor': after} if after else {})


@app.operation(routes.IMPORT_START)
def start_import(context_id: str) -> Any:
    from agent_memory.domain import backup

    management(app)
    services = get_services()
    started = backup.start_import(services.control, services.context, _embedding(services), context_id, raw_json_body(app), utcnow())
    return json_response(started, 201)


@app.operation(routes.IMPORT_RECORDS)
def stage_import(context_id: str, import_id: str) -> Any:
    from agent_memory.domain import backup

    management(app)
    request, _ = parse_body(app, ImportRecords)
    services = get_services()
    return json_response(backup.stage(services.control, services.context, context_id, import_id, request.start_line, request.records))


@app.operation(routes.IMPORT_COMMIT)
def commit_import(context_id: str, import_id: str) -> Any:
    from agent_memory.domain import backup

    management(app)
    services = get_services()
    return json_response(backup.commit(services.control, services.context, context_id, import_id, utcnow()))


@app.operation(routes.IMPORT_DISCARD)
def discard_import(context_id: str, import_id: str) -> Any:
    from agent_memory.domain import backup

    management(app)
    services = get_services()
    backup.discard(services.control, services.context, context_id, import_id)
    return no_content()


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
