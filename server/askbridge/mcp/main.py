"""`askbridge mcp` (inline): open the store, start the host, serve one MCP client on stdio.

Exit status: 0 at end of input (the client went away: its calls in flight are
cut off outcome-unknown, the store is flushed and closed); 1 with a clear
message on stderr when the data directory cannot be used. Logs never go to
stdout. The host process (`askbridge host`) serves an attached `askbridge
mcp` with the same `serve_mcp`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import anyio

from askbridge.host.options import open_data_store
from askbridge.host.store_api import EventStore


def run_mcp(args: argparse.Namespace) -> int:
    store = open_data_store(args)
    if store is None:
        return 1
    options = {
        "ask_timeout": args.ask_timeout if args.ask_timeout is not None else 120,
        "cwd": os.getcwd(),
        "data_dir": str(args.data_dir or "(default)"),
    }
    try:
        return anyio.run(_serve_stdio, store, options)
    finally:
        store.close()


async def _serve_stdio(store: EventStore, options: dict[str, Any]) -> int:
    from askbridge.host.host import Host
    from askbridge.stdio import join_copiers, open_stdio

    from .door import serve_mcp

    reader, writer = await open_stdio()
    async with Host(store) as host:
        status = await serve_mcp(host, reader, writer, env=dict(os.environ), options=options)
    writer.close()
    with anyio.move_on_after(5):
        await writer.wait_closed()
    join_copiers()
    return status
