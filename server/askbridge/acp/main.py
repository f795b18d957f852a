"""`askbridge acp`: open the store, start the host, serve one ACP client on stdio.

Exit status: 0 at end of input (the client went away: turns are cancelled,
claims released, the store flushed and closed); 1 with a clear message on
stderr when the data directory cannot be used. Logs never go to stdout.

`serve_acp` is the same door on any pair of asyncio streams, with an optional
injected clock and a `setup` hook that sees the `AcpServer` before the first
message is read (tests use it to add test-only extension methods).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from typing import Any

import anyio

from askbridge.core import Clock
from askbridge.host.host import Host
from askbridge.host.options import host_settings, open_data_store
from askbridge.host.store_api import EventStore
from askbridge.stdio import open_stdio

from .server import AcpServer

STDIN_BUFFER_LIMIT = 8 * 1024 * 1024  # lines may be longer: the SDK reads them in pieces


def run_acp(args: argparse.Namespace) -> int:
    store = open_data_store(args)
    if store is None:
        return 1
    try:
        return anyio.run(_serve_stdio, store, host_settings(args))
    finally:
        store.close()


async def _serve_stdio(store: EventStore, settings: dict[str, Any]) -> int:
    reader, writer = await open_stdio(limit=STDIN_BUFFER_LIMIT)
    return await serve_acp(store, settings, reader, writer)


async def serve_acp(
    store: EventStore,
    settings: dict[str, Any],
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    *,
    clock: Clock | None = None,
    setup: Callable[[AcpServer], None] | None = None,
) -> int:
    """Serve until the client closes the stream; returns the exit status (0)."""
    async with anyio.create_task_group() as tg:
        async with Host(store, clock=clock, **settings) as host:
            server = AcpServer(host, reader, writer)
            if setup is not None:
                setup(server)
            tg.start_soon(server.outbox.run)
            try:
                await server.conn.main_loop()
            finally:
                # No await between the end of input and leaving the host: the SDK has just
                # failed every outstanding request with ConnectionError, and the host must
                # cancel the turns before an ask could mistake that for an answerer failure.
                server.close()
        tg.cancel_scope.cancel()
    with anyio.CancelScope(shield=True):
        await server.conn.close()
    return 0
