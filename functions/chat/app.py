"""POST /chat — the managed chat loop: response cache, retrieval, synthesis, turns stored after the reply."""

import json
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api import routes
from agent_memory.api.http import build_resolver, data_plane, header, json_response, parse_body
from agent_memory.composition import get_services
from agent_memory.domain import chat as chat_loop
from agent_memory.models import ChatRequest
from agent_memory.observability import logger, metrics
from agent_memory.wire_numbers import rounded

app = build_resolver()
get_services().embedder.warm()  # load the model in the init phase, not on the first request


@app.operation(routes.CHAT)
def chat(context_id: str) -> Any:
    caller, ports = data_plane(app, context_id)
    request, _ = parse_body(app, ChatRequest)
    services = get_services()
    result = chat_loop.chat(ports.memory, services.embedder, services.synthesizer(), services.pipeline(), caller, request)
    body = chat_loop.suppress_markers(result.body) if request.suppress_markers else result.body
    if request.stream or 'text/event-stream' in (header(app, 'accept') or ''):
        return sse_response(body, result.deltas)
    return json_response(body)


def sse_response(body: dict[str, Any], deltas: list[str]) -> Response[str]:
    """Server-sent events: one frame per delta, then a final ``done`` frame with the citations.

    API Gateway HTTP APIs buffer Lambda responses, so the frames arrive together; the framing is what
    streaming clients parse.
    """
    ids = {'traceId': body['traceId'], 'sessionId': body['sessionId']}
    frames = [f'data: {json.dumps({"delta": d, **ids})}\n\n' for d in deltas]
    frames.append(f'data: {json.dumps(rounded({"done": True, **body}))}\n\n')
    headers = {'Cache-Control': 'no-cache'}
    return Response(status_code=200, content_type='text/event-stream', body=''.join(frames), headers=headers)


@logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP, clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
