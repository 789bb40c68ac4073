"""Writes: POST /facts, POST /facts/batch, GET /extractions/{turn_id}."""

import re
from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, header, json_response, parse_body, peek_session_id
from agent_memory.composition import get_services
from agent_memory.domain import facts
from agent_memory.errors import BadRequest
from agent_memory.models import FactsBatchRequest, FactsRequest
from agent_memory.observability import logger, metrics

app = build_resolver()
_WAIT = re.compile(r'(?:^|[;,\s])wait=(\d+(?:\.\d+)?)')


def prefer_wait() -> float:
    """``Prefer: wait=N`` (RFC 7240), at most 25 s."""
    raw = header(app, 'Prefer')
    if not raw:
        return 0.0
    found = _WAIT.search(raw)
    if not found:
        return 0.0
    seconds = float(found.group(1))
    if seconds > facts.MAX_WAIT_SECONDS:
        raise BadRequest(f'Prefer: wait may be at most {facts.MAX_WAIT_SECONDS} seconds')
    return seconds


@app.operation(routes.FACTS)
def post_facts(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id, peek_session_id(app))
    request, raw = parse_body(app, FactsRequest)
    facts.check_text_size(request.text)
    wait = prefer_wait()
    status, body = facts.remember(ports.memory, caller, get_services().pipeline(), request, raw, header(app, 'Idempotency-Key'), wait)
    metrics.add_metric(name='FactsWritten', unit=MetricUnit.Count, value=1)
    return json_response(body, status)


@app.operation(routes.FACTS_BATCH)
def post_facts_batch(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, raw = parse_body(app, FactsBatchRequest)
    facts.check_text_size(*(m.content for m in request.messages))
    facts.check_batch_size([m.content for m in request.messages])
    wait = prefer_wait()
    status, body = facts.remember_batch(ports.memory, caller, get_services().pipeline(), request, raw, header(app, 'Idempotency-Key'), wait)
    metrics.add_metric(name='FactsWritten', unit=MetricUnit.Count, value=len(request.messages))
    return json_response(body, status)


@app.operation(routes.EXTRACTION)
def get_extraction(context_id: str, turn_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    return json_response(facts.extraction_status(ports.memory, caller, turn_id))


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
