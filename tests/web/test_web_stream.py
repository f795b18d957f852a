"""B6, B8: the event stream's writes, in-process on the door's own HTTP server (http.py).

No host and no browser: what is tested is the server's streaming response itself. An
event written from a plain callback (as `Bridge.emit` calls stream.py's listener) is
on the wire before the call returns, without a turn of the event loop (the
page's card must not wait for the door's other work); a client that stops reading is
cut off once MAX_BACKLOG waits for it, and the server goes on serving the others.
Through the door's own event stream (stream.py, on a Bridge that no host feeds), a
view waits for the card behind it and goes out in the same write, before it.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.lowlevel
import httpx
import pytest
from served_http import Streams, open_stream, serving, started

from askbridge.jsonrpc import lsp_connection
from askbridge.web import http
from askbridge.web.bridge import Bridge
from askbridge.web.messages import Request, Response
from askbridge.web.stream import event_stream

HEAD_END = b"\r\n\r\n"


async def test_B6_an_event_is_on_the_wire_before_the_write_returns() -> None:
    streams = Streams()
    async with serving(streams.handle) as port:
        with open_stream(port) as sock:
            write = await started(streams)  # the head was sent (and drained) before
            head = b""
            while HEAD_END not in head:
                head += sock.recv(4096)
            assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower()
            # From here the loop does not run until the test awaits again: a blocking
            # recv only sees what the write itself handed to the socket.
            write(b'data: {"type":"card"}\n\n')
            got = head.split(HEAD_END, 1)[1]
            while b'{"type":"card"}' not in got:
                got += sock.recv(4096)
            write(b"data: 2\n\n")
            while b"data: 2" not in got:
                got += sock.recv(4096)


async def test_B8_a_client_that_stops_reading_is_cut_off_and_others_are_served(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "MAX_BACKLOG", 256 * 1024)
    chunk = b"data: " + b"x" * (64 * 1024) + b"\n\n"
    streams = Streams()
    async with serving(streams.handle) as port:
        with open_stream(port, rcvbuf=64 * 1024):  # and never read from it
            write, sent = await started(streams), 0
            with anyio.fail_after(10):
                while not streams.ended.is_set():
                    write(chunk)  # after the cut, writes are dropped, never raised
                    sent += len(chunk)
                    await anyio.lowlevel.checkpoint()
            # Cut off at the bound (plus what the kernel buffers), not grown without one.
            assert sent < 64 * 1024 * 1024
        async with httpx.AsyncClient(timeout=10) as other:
            assert (await other.get(f"http://127.0.0.1:{port}/ping")).json() == {"ok": True}


@asynccontextmanager
async def door_stream() -> AsyncIterator[tuple[Bridge, int]]:
    """The door's event stream on a Bridge whose connection nobody serves: no host."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    bridge = Bridge(lsp_connection(reader, writer))

    async def handle(request: Request) -> Response:
        return event_stream(bridge, lambda: True)

    try:
        async with serving(handle) as port:
            yield bridge, port
    finally:
        writer.close()
        theirs.close()


async def read_until(sock: socket.socket, marker: bytes, got: bytes = b"") -> bytes:
    """Read (letting the loop run) until `marker` and the end of its event are in."""
    sock.setblocking(False)
    with anyio.fail_after(10):
        while marker not in got or b"\n\n" not in got.split(marker, 1)[1]:
            await anyio.wait_readable(sock)
            got += sock.recv(65536)
    return got


def view(n: int) -> dict[str, object]:
    return {"type": "view", "sessionId": "s", "view": {"active": [], "settled": [], "n": n}}


async def test_B6_a_view_goes_out_with_the_card_behind_it_and_alone_soon() -> None:
    async with door_stream() as (bridge, port):
        with open_stream(port) as sock:
            await read_until(sock, b'"client":"b-')  # the state comes first (B6)
            bridge.emit(view(1))
            with pytest.raises(BlockingIOError):  # held: the loop has not run since
                sock.recv(65536)
            bridge.emit({"type": "card", "card": {"id": "c-1"}})
            sock.setblocking(True)
            got = b""
            while b'"id":"c-1"' not in got:  # written by the emit itself, the view first
                got += sock.recv(65536)
            assert got.index(b'"n":1') < got.index(b'"id":"c-1"')
            bridge.emit(view(2))  # nothing behind it: out after HOLD_S
            await read_until(sock, b'"n":2')
