"""POST /api/v1/{context_id}/facts — remember a turn (infer none) or caller-supplied triples."""

from typing import Any

from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import build_resolver, data_plane, header, json_response, parse_body
from agent_memory.config import get_settings
from agent_memory.domain import facts
from agent_memory.errors import PayloadTooLarge
from agent_memory.models import FactsRequest
from agent_memory.observability import logger, metrics

app = build_resolver()


@app.post('/api/v1/<context_id>/facts')
def post_facts(context_id: str) -> Any:
    caller, store = data_plane(app, context_id)
    request, raw = parse_body(app, FactsRequest)
    if request.text is not None and len(request.text.encode()) > get_settings().max_text_bytes:
        raise PayloadTooLarge(f'text exceeds {get_settings().max_text_bytes} bytes')
    status, body = facts.remember(store, caller, request, raw, header(app, 'Idempotency-Key'))
    metrics.add_metric(name='FactsWritten', unit=MetricUnit.Count, value=1)
    return json_response(body, status)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
