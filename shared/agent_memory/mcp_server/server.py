"""The MCP server (official SDK, low-level ``Server``): tools/list and tools/call over the tools in ``tools.py``.

The low-level server is used rather than ``MCPServer`` because the contract needs control over two error paths
the high-level one folds together: arguments that fail their schema are a JSON-RPC ``-32602`` protocol error,
while a tool that runs and fails is a result with ``isError: true`` and ``structuredContent.error {status, message}``.

The authenticated caller is set per HTTP request by the Lambda handler in ``CURRENT_CALLER``; each request runs in
its own event loop, so the value never leaks between requests.
"""

from __future__ import annotations

import contextvars
import logging
import time
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from aws_lambda_powertools.metrics import MetricUnit
from pydantic import ValidationError

from agent_memory import __version__
from agent_memory.composition import get_services
from agent_memory.domain.auth import Caller, authenticate_key
from agent_memory.errors import AgentMemoryError
from agent_memory.mcp_server.sdk import MCPError, Server, ServerRequestContext
from agent_memory.mcp_server.tools import TOOLS, Tool, ToolArgs
from agent_memory.observability import logger, metrics
from agent_memory.public_errors import public_detail, request_ref


@dataclass(frozen=True)
class RequestAuth:
    caller: Caller
    headers: dict[str, str]
    request_id: str


CURRENT_CALLER: contextvars.ContextVar[RequestAuth] = contextvars.ContextVar('agent_memory_mcp_caller')

# The SDK logs its per-request session-manager start/stop at INFO: in Lambda that is two lines per call, paid for.
logging.getLogger('mcp').setLevel(logging.WARNING)

INSTRUCTIONS = (
    'Long-term memory for this agent. Call `context` (or `recall`) before answering to bring back what is known about '
    'the user and the topic; call `remember` with anything worth keeping; `forget` when asked to; `inspect` to see an '
    "entity's facts and how they changed."
)


def _tool_listing(tool: Tool) -> types.Tool:
    return types.Tool(
        name=tool.name,
        description=tool.description,
        input_schema=tool.input_schema(),
        annotations=types.ToolAnnotations(read_only_hint=tool.read_only, destructive_hint=tool.destructive, open_world_hint=False),
    )


LISTING = [_tool_listing(tool) for tool in TOOLS.values()]  # the schemas are fixed: built once per cold start
INPUT_SCHEMAS = {tool.name: tool.input_schema for tool in LISTING}


async def _list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    return types.ListToolsResult(tools=LISTING)


def _error_result(status: int, message: str, title: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(text=f'{title} ({status}): {message}')],
        structured_content={'error': {'status': status, 'title': title, 'message': message}},
        is_error=True,
    )


def _parse_arguments(tool: Tool, arguments: dict[str, Any] | None) -> tuple[ToolArgs, Any]:
    """The validated arguments and the REST request they amount to; anything either refuses is -32602."""
    try:
        args = tool.args.model_validate(arguments or {})
        return args, args.request()
    except ValidationError as exc:
        problems = '; '.join(f'{".".join(str(p) for p in e["loc"]) or "arguments"}: {e["msg"]}' for e in exc.errors())
        raise MCPError(types.INVALID_PARAMS, f'invalid arguments for {tool.name}: {problems}') from exc


def run_tool(tool: Tool, args: ToolArgs, request: Any, auth: RequestAuth) -> types.CallToolResult:
    """Run one validated call as the request's caller; domain failures become ``isError`` results."""
    services = get_services()
    started = time.perf_counter()
    outcome = 'ok'
    try:
        caller = auth.caller
        if args.context_id is not None and args.context_id != caller.context_id:
            caller = authenticate_key(services.control, services.migrated, auth.headers, args.context_id)  # raises the 401
        output = tool.run(services, services.context(caller.context_id), caller, args, request)
        return types.CallToolResult(content=[types.TextContent(text=output.text)], structured_content=output.structured)
    except AgentMemoryError as exc:
        outcome = 'error'
        return _error_result(exc.status, public_detail(exc, auth.request_id), exc.title)
    except Exception:
        outcome = 'error'
        logger.exception('tool crashed', extra={'tool': tool.name})
        return _error_result(500, request_ref(auth.request_id), 'Internal error')
    finally:
        metrics.add_metric(name='McpToolCalls' if outcome == 'ok' else 'McpToolErrors', unit=MetricUnit.Count, value=1)
        logger.info('mcp tool call', extra={'tool': tool.name, 'outcome': outcome, 'ms': round((time.perf_counter() - started) * 1000, 1)})


async def _call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
    tool = TOOLS.get(params.name)
    if tool is None:
        raise MCPError(types.METHOD_NOT_FOUND, f'unknown tool {params.name!r}; tools: {", ".join(TOOLS)}')
    args, request = _parse_arguments(tool, params.arguments)
    # The domain is synchronous and this event loop serves exactly one HTTP request, so it runs inline.
    return run_tool(tool, args, request, CURRENT_CALLER.get())


def build_server() -> Server[Any]:
    server: Server[Any] = Server(
        'agent-memory',
        version=__version__,
        title='Agent Memory',
        instructions=INSTRUCTIONS,
        on_list_tools=_list_tools,
        on_call_tool=_call_tool,
        get_tool_input_schema=INPUT_SCHEMAS.get,
    )
    server.middleware.clear()  # drop the SDK's default OpenTelemetry span middleware: Powertools logs and metrics cover it
    return server
