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
import sys
from collections.abc import Callable
from typing import Any

import anyio

from askbridge.core import Clock
from askbridge.host.datadir import open_store, resolve_data_dir
from askbridge.host.host import Host
from askbridge.host.store_api import EventStore
from askbridge.host.store_sqlite import StoreError

from .server import AcpServer
from .stdio import open_stdio

STDIN_BUFFER_LIMIT = 8 * 1024 * 1024  # lines may be longer: the SDK reads them in pieces


def host_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Host keyword arguments from the flags `serve` and `acp` share (protocol.md)."""
    ask: dict[str, Any] = {}
    if args.ask_mode is not None:
        ask["mode"] = args.ask_mode
    if args.ask_timeout is not None:
        ask["timeout"] = args.ask_timeout
    return {
        "model": args.model,
        "ask_user_question": {"mode": "legacy", "timeout": 120, **ask},
        "max_turn_requests": args.max_turn_requests,
    }


def run_acp(args: argparse.Namespace) -> int:
    try:
        store = open_store(resolve_data_dir(args.data_dir))
    except StoreError as exc:
        print(f"askbridge: {exc}", file=sys.stderr)
        return 1
    try:
        return anyio.run(_serve_stdio, store, host_settings(args))
    finally:
        store.close()


async def _serve_stdio(store: EventStore, settings: dict[str, Any]) -> int:
    reader, writer = await open_stdio(STDIN_BUFFER_LIMIT)
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
