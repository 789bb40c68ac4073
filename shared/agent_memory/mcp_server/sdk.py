"""The parts of the MCP SDK the server uses, without the ``mcp`` and ``mcp.server`` package ``__init__``s
(which import the MCP client, the high-level ``MCPServer`` and, through them, ``cryptography``): see
``agent_memory.lazy_package``."""

from __future__ import annotations

from agent_memory.lazy_package import defer_package_init

defer_package_init('mcp')
defer_package_init('mcp.server')

from mcp.server.context import ServerRequestContext  # noqa: E402
from mcp.server.lowlevel import Server  # noqa: E402
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager  # noqa: E402
from mcp.shared.exceptions import MCPError  # noqa: E402

__all__ = ['MCPError', 'Server', 'ServerRequestContext', 'StreamableHTTPSessionManager']
