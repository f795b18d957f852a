"""B8, S14: every connection is a task of the HTTP server's task group (web/http.py).

In-process on the door's own server, over real loopback sockets, with no host: a
connection that fails for a reason of ours (here an `admit` and an event stream's
body that raise, as a bug would) ends alone, with one log line, while another
connection's event stream goes on and new requests are served; cancelling `serve`
with connections open in every state closes each of them and leaves no task behind.
"""

from __future__ import annotations

import asyncio
import logging
import socket

import anyio
import pytest
from served_http import Streams, open_stream, serving, started

from askbridge.web.http import HttpServer
from askbridge.web.messages import Request, Response, Write

HEAD_END = b"\r\n\r\n"


class Buggy(Streams):
    """`/events` as Streams has it; `/bad-admit` fails in `admit`, `/bad-stream` in its body."""

    def admit(self, request: Request) -> int:
        if request.path == "/bad-admit":
            raise LookupError("a bug in admit")
        return 1024

    async def handle(self, request: Request) -> Response:
        if request.path != "/bad-stream":
            return await super().handle(request)

        async def body(write: Write) -> None:
            write(b"data: first\n\n")
            raise LookupError("a bug in a stream")

        return Response(200, content_type="text/event-stream", stream=body)


def read_to_end(sock: socket.socket) -> bytes:
    got = b""
    while chunk := sock.recv(65536):
        got += chunk
    return got


async def exchange(port: int, path: str) -> bytes:
    """All the server sends back for `GET path` before it closes, read in a thread."""
    with open_stream(port, path=path) as sock:
        return await anyio.to_thread.run_sync(read_to_end, sock)


async def ping(port: int) -> bytes:
    head = b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    async with await anyio.connect_tcp("127.0.0.1", port) as stream:
        await stream.send(head)
        got = b""
        with anyio.fail_after(5):
            while b'{"ok": true}' not in got:
                got += await stream.receive()
    return got


async def test_B8_a_connection_that_fails_ends_alone_and_the_server_serves_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    buggy = Buggy()
    caplog.set_level(logging.ERROR, "askbridge.web")
    async with serving(buggy.handle, buggy.admit) as port:
        with open_stream(port) as watcher:
            write = await started(buggy)
            assert await exchange(port, "/bad-admit") == b""  # closed without a response
            cut = await exchange(port, "/bad-stream")
            assert cut.startswith(b"HTTP/1.1 200") and b"data: first" in cut
            assert not cut.endswith(b"0\r\n\r\n")  # cut off, not a finished body
            write(b"data: still here\n\n")  # the other connection's stream goes on
            got = b""
            while b"data: still here" not in got:
                got += await anyio.to_thread.run_sync(watcher.recv, 65536)
            assert not buggy.ended.is_set()
            assert (await ping(port)).startswith(b"HTTP/1.1 200")
    failed = [r for r in caplog.records if r.name == "askbridge.web"]
    assert [r.getMessage() for r in failed] == ["a connection failed; it was closed"] * 2
    assert all(r.exc_info is not None for r in failed)


async def test_S14_cancelling_serve_closes_every_connection_and_leaves_no_task() -> None:
    """An event stream, a kept-alive idle connection and one half through its head: all
    closed when `serve` is cancelled, which returns only then; the port no longer listens,
    and no task of the server is left."""
    streams = Streams()
    tasks_before = asyncio.all_tasks()
    server = HttpServer()
    port = await server.bind("127.0.0.1", 0, None)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve, streams.handle, lambda request: 1024)
            stream = open_stream(port)
            await started(streams)
            idle = socket.create_connection(("127.0.0.1", port), timeout=5)
            idle.sendall(b"GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            reply = b""
            while b'{"ok": true}' not in reply:
                reply += await anyio.to_thread.run_sync(idle.recv, 65536)
            half = socket.create_connection(("127.0.0.1", port), timeout=5)
            half.sendall(b"GET / HTTP/1.1\r\nHo")
            tg.cancel_scope.cancel()
        assert streams.ended.is_set()
        for sock in (stream, idle, half):
            with sock:
                try:
                    rest = await anyio.to_thread.run_sync(read_to_end, sock)
                except ConnectionResetError:
                    rest = b""
                assert HEAD_END not in rest or sock is stream  # no new response began
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
    assert asyncio.all_tasks() == tasks_before
