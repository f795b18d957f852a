"""`serve_mcp`: one MCP connection against an existing Host (X1–X6).

    status = await serve_mcp(host, reader, writer, env=env, options={"ask_timeout": 120})

Runs the official SDK's low-level `Server` in handshake (`initialize`) mode on
the given asyncio streams (mcp/transport.py) and returns the exit status, 0 at
end of input; the caller closes the writer. `options`: `ask_timeout` (the
default timeout of `ask_user_question` in seconds, -1 for none; default 120),
`cwd` (the front door's working directory, for the session's title; default
this process's), `data_dir` (for the log line).

Why the handshake era only (`serve_connection` with a loop-mode dispatcher,
as `mcp.server.runner.serve_loop` builds it, rather than `Server.run`): the
2026-07-28 era forbids server-initiated requests, and X3 asks the client
itself through a form elicitation, a server request; a door is also one
connection (X1), which the per-request envelope era does not have. A client
that probes `server/discover` first gets an error and falls back to
`initialize` (the SDK's own `mode="auto"` does).

The client attaches to the host as an `McpLink` (mcp/link.py) and follows its
external session; the session exists from the first call that needs it
(mcp/tools.py). End of input: calls in flight are cut off outcome-unknown, so
their questions stay answerable in the editors (X6), and the client detaches.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping
from typing import Any

import mcp_types as types
from mcp.server.connection import Connection
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.runner import serve_connection
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher, progress_token_from_params

from askbridge import __version__
from askbridge.core import HarnessError
from askbridge.host.agent.tools import valid_timeout
from askbridge.host.host import Host
from askbridge.jsonrpc import Input
from askbridge.protocol.defaults import ASK_TIMEOUT_DEFAULT_SECONDS, ASK_TIMEOUT_MESSAGE

from .link import McpLink
from .tools import ExternalAgent, Progress, ToolResult
from .transport import Wire

log = logging.getLogger("askbridge.mcp")

DEFAULT_CLIENT_NAME = "MCP client"


async def serve_mcp(
    host: Host,
    reader: Input,
    writer: asyncio.StreamWriter,
    *,
    env: Mapping[str, str],
    options: dict[str, Any],
) -> int:
    ask_timeout = options.get("ask_timeout", ASK_TIMEOUT_DEFAULT_SECONDS)
    if not valid_timeout(ask_timeout):
        raise ValueError(f"ask_{ASK_TIMEOUT_MESSAGE}")
    log.info(
        "serving an MCP client (door mcp, data dir %s, pid %d)",
        options.get("data_dir", "?"),
        os.getpid(),
    )
    wire = Wire(reader, writer, on_end_of_input=lambda: agent.disconnected())
    connection: Connection | None = None
    link = McpLink(
        host, wire.requests, lambda: connection.client_capabilities if connection else None
    )
    client = host.attach(link, env, "mcp")
    link.client = client
    agent = ExternalAgent(
        host,
        client,
        client_name=lambda: _client_name(connection),
        cwd=options.get("cwd"),
        ask_timeout=ask_timeout,
    )
    server = _server(agent)
    try:
        async with wire.streams() as (read_stream, write_stream):
            dispatcher = JSONRPCDispatcher(
                read_stream, write_stream, inline_methods=frozenset({"initialize"})
            )
            connection = Connection.for_loop(dispatcher)
            await serve_connection(server, dispatcher, connection=connection, lifespan_state={})
    finally:
        agent.disconnected()
        host.detach(client)
        log.info("the MCP client is gone")
    return 0


def _client_name(connection: Connection | None) -> str:
    params = connection.client_params if connection is not None else None
    info = params.client_info if params is not None else None
    return info.name if info is not None and info.name else DEFAULT_CLIENT_NAME


def _server(agent: ExternalAgent) -> Server[Any]:
    tools = [
        types.Tool(
            name=d["name"],
            description=d["description"],
            input_schema=d["parameters"],
        )
        for d in agent.definitions
    ]
    names = {t.name for t in tools}

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        progress: Progress | None = None
        if progress_token_from_params(ctx.params) is not None:

            async def progress(value: float, message: str) -> None:
                await ctx.session.report_progress(value, None, message)

        try:
            result = await agent.call(params.name, params.arguments or {}, progress)
        except HarnessError as exc:  # S4: a store failure ends this call only
            result = agent.failure(exc)
        return _call_tool_result(result)

    return Server(
        "askbridge", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool
    )


def _call_tool_result(result: ToolResult) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text) for text in result.texts],
        structured_content=result.structured,
        is_error=result.is_error,
    )
