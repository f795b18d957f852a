"""A unix-socket proxy in front of a PostgreSQL server that can lose one reply.

`LosingProxy(server_socket_dir)` listens on a socket directory of its own (use
`proxy.url(dbname)`) and passes bytes both ways. `lose_reply_to(marker)` arms it:
the next statement whose bytes contain `marker` goes to the server, the server
runs and commits it, and once the server says it is ready for the next query (its
ReadyForQuery message, sent after the COMMIT) the proxy closes both sides without
passing the reply on. The client sees its connection lost mid-commit, not knowing
the commit happened: what a network cut at the worst moment does. `lost` counts the
replies lost so far.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path
from urllib.parse import quote

import anyio
from anyio.abc import SocketStream

_SOCKET_NAME = ".s.PGSQL.5432"


class LosingProxy:
    def __init__(self, server_socket_dir: str) -> None:
        self.target = str(Path(server_socket_dir) / _SOCKET_NAME)
        self.dir = tempfile.mkdtemp(prefix="abpx-", dir="/tmp")
        self.marker: bytes | None = None
        self.lost = 0

    def url(self, dbname: str) -> str:
        return f"postgresql://postgres@/{dbname}?host={quote(self.dir)}"

    def lose_reply_to(self, marker: bytes) -> None:
        self.marker = marker

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        listener = await anyio.create_unix_listener(str(Path(self.dir) / _SOCKET_NAME))
        task_status.started()
        try:
            await listener.serve(self._pass)
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
            with anyio.CancelScope(shield=True):
                await listener.aclose()

    async def _pass(self, client: SocketStream) -> None:
        server = await anyio.connect_unix(self.target)
        losing = anyio.Event()  # set when the client sent the marked statement
        async with client, server, anyio.create_task_group() as tasks:

            async def upstream() -> None:
                with contextlib.suppress(
                    anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    while True:
                        data = await client.receive()
                        if self.marker is not None and self.marker in data:
                            self.marker = None
                            losing.set()
                        await server.send(data)
                tasks.cancel_scope.cancel()

            async def downstream() -> None:
                buffer = b""
                with contextlib.suppress(
                    anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError
                ):
                    while True:
                        data = await server.receive()
                        if not losing.is_set():
                            await client.send(data)
                            continue
                        buffer += data
                        if _has_ready_for_query(buffer):
                            self.lost += 1
                            break  # drop the reply, and the connection
                tasks.cancel_scope.cancel()

            tasks.start_soon(upstream)
            tasks.start_soon(downstream)


def _has_ready_for_query(stream: bytes) -> bool:
    """Whether the server's messages in `stream` (type byte, int32 length) hold a 'Z'."""
    position = 0
    while position + 5 <= len(stream):
        kind = stream[position : position + 1]
        length = int.from_bytes(stream[position + 1 : position + 5], "big")
        if kind == b"Z":
            return True
        position += 1 + length
    return False
