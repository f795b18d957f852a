"""The LSP-framed door on a pair of streams: `serve_lsp(host, reader, writer, …) -> exit status`.

What an inline `askbridge serve` runs on its own stdio and what the host
process runs on the stdio an attached front door handed it (H4): the same
code, so every test of the door holds in both host modes.

Exit status: 0 after `shutdown` + `exit` or at end of input (the client went
away: its sessions' turns end as M6 says, its claims are released); 1 for
`exit` without `shutdown`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from askbridge.host.host import Host
from askbridge.jsonrpc import Input, lsp_connection, serve_then_close

from .early import EarlyStart
from .server import LspServer


async def serve_lsp(
    host: Host,
    reader: Input,
    writer: asyncio.StreamWriter,
    *,
    env: Mapping[str, str] | None = None,
    defaults: dict[str, Any] | None = None,
    early: EarlyStart | None = None,
    say: Callable[[str], None] | None = None,
    setup: Callable[[LspServer], None] | None = None,
) -> int:
    """Serve one LSP client until `exit` or end of input.

    `defaults`: the front door's flags as session settings (model, ask mode and
    timeout), under the client's `initializationOptions`. `early`: what
    `answer_initialize_early` did before the event loop (inline only). `say`: a line for
    the client's stderr (input that is not LSP, jsonrpc/wrong_door.py). `setup`: called
    with the server before it reads anything (a test driver adds its methods).
    """
    unread = early.unread if early else b""
    if early is not None and early.initialize is not None:
        say = None  # its input started as LSP does: what follows is past its start
    conn = lsp_connection(reader, writer, unread=unread, on_foreign_start=say)
    server = LspServer(host, conn, on_exit=conn.stop, env=env, defaults=defaults)
    if setup is not None:
        setup(server)
    if early is not None and early.initialize is not None:
        await server.initialize(early.initialize)  # answered already: the same state, no reply
    await serve_then_close(conn, writer, server.close)
    return server.exit_code if server.exit_code is not None else 0
