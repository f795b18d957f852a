"""asyncio streams on the process's stdin/stdout for the ACP connection.

The streams use duplicates of fd 0 and fd 1; fd 1 and `sys.stdout` are then
pointed at stderr, so a stray print (ours, a library's, a child process's)
can never corrupt the newline-delimited JSON stream. stdin and stdout must be
pipes, sockets or ttys (asyncio cannot poll a regular file); editors always
start agents on pipes.
"""

from __future__ import annotations

import asyncio
import os
import sys


class _WritePipeProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for a write-only pipe, with the close waiter `wait_closed` needs."""

    def __init__(self) -> None:
        super().__init__()
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed.done():
            self._closed.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self._closed


async def open_stdio(limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """(reader on stdin, writer on stdout); afterwards fd 1 goes to stderr."""
    loop = asyncio.get_running_loop()
    in_fd, out_fd = os.dup(0), os.dup(1)
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=limit)
    stdin = os.fdopen(in_fd, "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(out_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(_WritePipeProtocol, stdout)
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)
