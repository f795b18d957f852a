"""`serve_mcp`: one MCP connection against an existing Host (X1–X6).

    status = await serve_mcp(host, reader, writer, env=env, options={"ask_timeout": 120})

Serves newline-delimited JSON-RPC on the given read side and asyncio writer and
returns the exit status, 0 at end of input; the caller closes the writer.
`options`: `ask_timeout` (the default timeout of `ask_user_question` in
seconds, -1 for none; default 120), `cwd` (the front door's working directory,
for the session's title; default this process's), `data_dir` (for the log line).

One engine carries the whole connection: `jsonrpc.Connection`, the one every
door runs on, in the MCP dialect. It reads the client's requests with the
project's input rules (S3, S7, S8, S19: jsonrpc/) and sends the door's own
requests to the client (form elicitation, X3) through its `Outgoing`, with ids
`askbridge-N` and withdrawal by `notifications/cancelled`; a response that
arrives after a withdrawal goes to the request's late handler, so a form
accepted after the deadline becomes a late reply (L7). A request the client
cancels is never answered (the MCP dialect). The official SDK is kept for its
schema: `mcp_types` models validate what the client sends (-32602 otherwise)
and shape every result. Its own server is not used: its dispatcher drops a
response to a request it stopped waiting for (L7 needs it) and its stdio
transport keeps none of the input rules, so it would need this engine beside it.

`McpServer` serves the handshake era only (`initialize`): the 2026-07-28 era
forbids server-initiated requests, and X3 asks the client itself through a
form elicitation, a server request; a door is also one connection (X1), which
the per-request envelope era does not have. A client that probes
`server/discover` first gets -32601 and falls back to `initialize` (the SDK's
own `mode="auto"` does). Until `initialize`, every request but `ping` is
-32602, as the SDK's server answers; an unknown method is -32601.

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
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION
from pydantic import BaseModel

from askbridge import __version__
from askbridge.core import HarnessError
from askbridge.host.agent.tools import valid_timeout
from askbridge.host.host import Host
from askbridge.jsonrpc import (
    MCP,
    Connection,
    Inbound,
    Input,
    LineFramer,
    MessageWriter,
    RpcError,
    line_frame,
)
from askbridge.jsonrpc import messages as m
from askbridge.protocol.defaults import ASK_TIMEOUT_DEFAULT_SECONDS, ASK_TIMEOUT_MESSAGE
from askbridge.protocol.errors import RpcErrorCode

from .link import McpLink
from .tools import ExternalAgent, Progress, ToolResult

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
    inbound = Inbound.over(reader, LineFramer())
    conn = Connection(
        inbound, MessageWriter(writer, line_frame), dialect=MCP, id_prefix="askbridge-"
    )
    link = McpLink(host, conn.outgoing, lambda: server.capabilities)
    client = host.attach(link, env, "mcp")
    link.client = client
    agent = ExternalAgent(
        host,
        client,
        client_name=lambda: server.client_name,
        cwd=options.get("cwd"),
        ask_timeout=ask_timeout,
    )
    server = McpServer(conn, agent)
    # X6: the calls in flight are cut off outcome-unknown, marked before they are cancelled.
    conn.when_closed(agent.disconnected)
    try:
        await conn.serve()
    finally:
        agent.disconnected()
        host.detach(client)
        log.info("the MCP client is gone")
    return 0


class McpServer:
    """The MCP methods of one connection: the handshake, `ping`, `tools/list`, `tools/call`."""

    def __init__(self, conn: Connection, agent: ExternalAgent) -> None:
        self.conn, self.agent = conn, agent
        self.client: types.InitializeRequestParams | None = None  # once `initialize` came
        self.initialized = False  # `notifications/initialized` came
        tools = [
            types.Tool(name=d["name"], description=d["description"], input_schema=d["parameters"])
            for d in agent.definitions
        ]
        self._names = {t.name for t in tools}
        self._tools = _wire(types.ListToolsResult(tools=tools))
        conn.on_request("initialize", self.initialize)
        conn.on_request("ping", self.ping)
        conn.on_request("tools/list", self.list_tools)
        conn.on_request("tools/call", self.call_tool)
        conn.on_notification("notifications/initialized", self._initialized)

    @property
    def capabilities(self) -> types.ClientCapabilities | None:
        return self.client.capabilities if self.client is not None else None

    @property
    def client_name(self) -> str:
        info = self.client.client_info if self.client is not None else None
        return info.name if info is not None and info.name else DEFAULT_CLIENT_NAME

    async def initialize(self, params: Any) -> dict[str, Any]:
        init = types.InitializeRequestParams.model_validate(params, by_name=False)
        requested = init.protocol_version
        version = (
            requested if requested in HANDSHAKE_PROTOCOL_VERSIONS else LATEST_HANDSHAKE_VERSION
        )
        self.client = init
        return _wire(
            types.InitializeResult(
                protocol_version=version,
                capabilities=types.ServerCapabilities(
                    tools=types.ToolsCapability(list_changed=False)
                ),
                server_info=types.Implementation(name="askbridge", version=__version__),
            )
        )

    async def _initialized(self, params: Any) -> None:
        self.initialized = True

    async def ping(self, params: Any) -> dict[str, Any]:
        types.RequestParams.model_validate(_params(params), by_name=False)
        return {}

    async def list_tools(self, params: Any) -> dict[str, Any]:
        self._check_initialized()
        types.PaginatedRequestParams.model_validate(_params(params), by_name=False)
        return self._tools

    async def call_tool(self, params: Any) -> dict[str, Any]:
        self._check_initialized()
        call = types.CallToolRequestParams.model_validate(_params(params), by_name=False)
        if call.name not in self._names:
            raise RpcError(RpcErrorCode.INVALID_PARAMS, f"Unknown tool: {call.name}")
        try:
            result = await self.agent.call(
                call.name, call.arguments or {}, self._progress(_progress_token(params))
            )
        except HarnessError as exc:  # S4: a store failure ends this call only
            result = self.agent.failure(exc)
        return _call_tool_result(result)

    def _check_initialized(self) -> None:
        if self.client is None and not self.initialized:
            raise RpcError(RpcErrorCode.INVALID_PARAMS, "the client has not sent initialize")

    def _progress(self, token: m.MessageId | None) -> Progress | None:
        if token is None:
            return None

        def progress(value: float, message: str) -> None:
            params = {"progressToken": token, "progress": value, "message": message}
            self.conn.notify("notifications/progress", params)

        return progress


def _params(params: Any) -> Any:
    """Absent params validate as an empty object (required fields still reject it)."""
    return {} if params is None else params


def _progress_token(params: Any) -> m.MessageId | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if m.is_id(token) else None


def _wire(model: BaseModel) -> dict[str, Any]:
    """What the door set and nothing else: the models' defaults for fields it leaves unset
    belong to the 2026-07-28 era (`resultType`, `cacheScope`), not the handshake's."""
    return model.model_dump(by_alias=True, mode="json", exclude_unset=True, exclude_none=True)


def _call_tool_result(result: ToolResult) -> dict[str, Any]:
    return _wire(
        types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in result.texts],
            structured_content=result.structured,
            is_error=result.is_error,
        )
    )
