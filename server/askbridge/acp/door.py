"""The ACP door on a pair of streams: `serve_acp(host, reader, writer, …) -> exit status`.

What an inline `askbridge acp` runs on its own stdio and what the host process
runs on the stdio an attached front door handed it (H4). Exit status: 0 at
end of input (the client went away: turns end as M6 says, claims are
released). Tests drive it with a `setup` hook that sees the `AcpServer`
before the first message is read (test-only extension methods).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from askbridge.host.host import Host
from askbridge.jsonrpc import Input, line_connection, serve_then_close

from .server import AcpServer


async def serve_acp(
    host: Host,
    reader: Input,
    writer: asyncio.StreamWriter,
    *,
    env: Mapping[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    setup: Callable[[AcpServer], None] | None = None,
) -> int:
    """Serve one ACP client until it closes its stream; returns the exit status (0).

    `defaults`: the front door's flags as session settings, under `_meta.askbridge`.
    """
    conn = line_connection(reader, writer)
    async with anyio.create_task_group() as tasks:  # the claims held across hosts (G7)
        server = AcpServer(host, conn, env, defaults, tasks=tasks)
        if setup is not None:
            setup(server)
        await serve_then_close(conn, writer, server.close)
        tasks.cancel_scope.cancel()  # the client is gone; each claim's release is shielded
    return 0
