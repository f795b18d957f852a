"""The web door's own HTTP server (http.py) in-process, on a free loopback port, with no
host and no browser: for the tests of the server itself.

    streams = Streams()
    async with serving(streams.handle) as port:
        with open_stream(port) as sock:
            write = await started(streams)   # the test writes the event stream's body

`serving` is a context in the test's own task, not a fixture: the server's task group
cannot be entered in a fixture's set-up and left in its tear-down (two tasks).
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from askbridge.web.http import HttpServer
from askbridge.web.messages import Admit, Handler, Request, Response, Write, json_response


class Streams:
    """A handler whose `/events` streams whatever the test writes, and `/ping`."""

    def __init__(self) -> None:
        self.writers: list[Write] = []
        self.started = anyio.Event()
        self.ended = anyio.Event()

    async def handle(self, request: Request) -> Response:
        if request.path == "/ping":
            return json_response({"ok": True})

        async def body(write: Write) -> None:
            self.writers.append(write)
            self.started.set()
            try:
                await anyio.sleep_forever()
            finally:
                self.ended.set()

        return Response(200, content_type="text/event-stream", stream=body)


def take_1k(request: Request) -> int:
    """An `Admit` that takes every request, with a body of up to 1 KiB."""
    return 1024


@asynccontextmanager
async def serving(handle: Handler, admit: Admit = take_1k) -> AsyncIterator[int]:
    """The server serving `handle` while the block runs; its port. Leaving the block
    cancels `serve`, which returns once every connection is closed."""
    server = HttpServer()
    port = await server.bind("127.0.0.1", 0, None)
    async with anyio.create_task_group() as tg:
        await tg.start(server.serve, handle, admit)
        yield port
        tg.cancel_scope.cancel()


def open_stream(port: int, rcvbuf: int | None = None, path: str = "/events") -> socket.socket:
    """A blocking socket (5 s timeout) that has sent `GET path`."""
    sock = socket.socket()
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(5)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return sock


async def started(streams: Streams) -> Write:
    """The write of the first event stream, once its head is sent."""
    with anyio.fail_after(10):
        await streams.started.wait()
    return streams.writers[0]
