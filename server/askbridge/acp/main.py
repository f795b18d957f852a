"""`askbridge acp`: serve one ACP client on stdio against this data directory's host.

Exit status: 0 at end of input (the client went away: turns end as M6 says,
claims are released, the store is flushed and closed); 1 with a clear message
on stderr when the data directory cannot be used. Logs never go to stdout.

`serve_acp(host, reader, writer, env=…)` is the door on any pair of asyncio
streams against a running Host — what the host process runs for an attached
front door, and what tests drive with a `setup` hook that sees the
`AcpServer` before the first message is read (test-only extension methods).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from askbridge.host.host import Host
from askbridge.host.options import host_settings, open_data_store
from askbridge.host.store_api import EventStore
from askbridge.jsonrpc import line_connection
from askbridge.stdio import open_stdio

from .server import AcpServer


def run_acp(args: argparse.Namespace) -> int:
    store = open_data_store(args)
    if store is None:
        return 1
    try:
        return anyio.run(_serve_stdio, store, host_settings(args))
    finally:
        store.close()


async def _serve_stdio(store: EventStore, settings: dict[str, Any]) -> int:
    reader, writer = await open_stdio()
    async with Host(store, **settings) as host:
        return await serve_acp(host, reader, writer, env=os.environ)


async def serve_acp(
    host: Host,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    env: Mapping[str, str] | None = None,
    setup: Callable[[AcpServer], None] | None = None,
) -> int:
    """Serve one ACP client until it closes its stream; returns the exit status (0)."""
    conn = line_connection(reader, writer)
    server = AcpServer(host, conn, env)
    if setup is not None:
        setup(server)
    try:
        await conn.serve()
    finally:
        server.close()
        conn.writer.flush()
    writer.close()
    with anyio.move_on_after(5, shield=True):
        await writer.wait_closed()
    return 0
