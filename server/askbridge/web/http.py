"""The web door's HTTP/1.1 server: h11 parses and frames every message, this module only
moves bytes between it and the sockets (asyncio streams, TLS from an `ssl.SSLContext`).

Why h11 and not aiohttp: the door must idle under 40 MiB. Measured in
one run on this machine: the door process at rest was 49 MiB with aiohttp (its
import alone adds ~17 MiB: the client, connector, cookie jar, multipart and
websocket code a server-only door never runs) and ~37 MiB with h11 (+0.4 MiB).
h11 is the python-hyper HTTP/1.1 state machine under httpcore (so httpx, already
a dependency, brings it) and uvicorn: request parsing, header validation,
keep-alive, chunked and close-delimited framing are all its own. The door needs no
HTTP/2 and no websockets (the event stream is server-sent events).

Bounded before buffered (S14): a request's head is at most MAX_HEAD bytes and must
arrive within HEAD_S of the connection's turn (a slow-dripping client is cut off);
then `admit` judges the head alone (Host, Origin, session: app.py) and either
refuses at once, without reading the body, or names the most body bytes it takes,
counted as they arrive (413 past it). At most MAX_CONNECTIONS are served at once;
one more gets a 503 and is closed. Every response, refusals included, carries
SECURITY_HEADERS. A streaming response (the event stream) ends when the client closes
its side, noticed at once by reading the socket, not at the next write. Its writes
are synchronous: each goes to the socket at once (asyncio sets TCP_NODELAY), so an
event leaves in the loop step that made it; a client that lets more than
MAX_BACKLOG pile up is cut off (a page reconnects and gets one fresh state, B6).

Every connection is a task of `serve`'s anyio task group: cancelling `serve` ends
them all (event streams included); a failure ends its own connection alone, with one
log line if unexpected. The listener is asyncio's, not anyio's: anyio's streams only
send by awaiting, and the event stream writes synchronously and is bounded by its
transport's write buffer (MAX_BACKLOG); asyncio's callback only hands each connection
to the task group.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qs, unquote

import anyio
import h11
from anyio import TASK_STATUS_IGNORED
from anyio.abc import TaskGroup, TaskStatus

from .messages import SECURITY_HEADERS, Admit, Handler, Request, Response, Write, refusal

logger = logging.getLogger("askbridge.web")

HEAD_S = 10.0  # also the keep-alive idle time: a browser reconnects when it needs to
BODY_S = 60.0
MAX_HEAD = 64 * 1024
MAX_CONNECTIONS = 256
READ_CHUNK = 64 * 1024
# A head is read in small steps: h11 refuses one whose incomplete part passes MAX_HEAD,
# so no head larger than MAX_HEAD + HEAD_CHUNK is ever held.
HEAD_CHUNK = 4 * 1024
LINGER_S = 2.0
LINGER_BYTES = 4 << 20
MAX_BACKLOG = 16 * 1024 * 1024


class _Closed(Exception):
    """The client closed the connection or broke the protocol: stop serving it."""


class HttpServer:
    def __init__(self) -> None:
        self.handle: Handler | None = None
        self.admit: Admit | None = None
        self._server: asyncio.Server | None = None
        self._connections: TaskGroup | None = None  # serve's, while it serves
        self._open = 0  # connections being served, the 503s not counted

    async def bind(self, host: str, port: int, tls: ssl.SSLContext | None) -> int:
        """Bind and listen, not serving yet; the bound port (for `--listen HOST:0`).
        OSError when it cannot."""
        self._server = await asyncio.start_server(
            self._accepted,
            host,
            port,
            ssl=tls,
            ssl_handshake_timeout=HEAD_S if tls else None,
            start_serving=False,
        )
        return int(self._server.sockets[0].getsockname()[1])

    async def serve(
        self, handle: Handler, admit: Admit, *, task_status: TaskStatus[None] = TASK_STATUS_IGNORED
    ) -> None:
        """Serve requests until cancelled (`task_status` is told once connections are taken):
        `admit` judges each head, `handle` each admitted request. Cancelled, it stops
        listening, ends every open connection and returns once all are closed."""
        assert self._server is not None
        self.handle, self.admit = handle, admit
        async with anyio.create_task_group() as connections:
            self._connections = connections
            try:
                await self._server.start_serving()
                task_status.started()
                await anyio.sleep_forever()
            finally:
                # Before the group ends: no new connection joins a group that is ending.
                self._connections = None
                self.close()

    def close(self) -> None:
        """Stop listening (also for a server bound but never served); `serve` ends the
        connections."""
        if self._server is not None:
            self._server.close()

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """asyncio's callback for a new connection: a task of `serve`'s group."""
        if self._connections is None:  # accepted as serving ended
            writer.transport.abort()
            return
        self._connections.start_soon(self._connection, reader, writer)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection, from its first byte to its close. Nothing raised here leaves
        it but cancellation: a task group would end every other connection with it."""
        try:
            if self._open >= MAX_CONNECTIONS:
                await self._busy(reader, writer)
                return
            self._open += 1
            try:
                await self._exchanges(reader, writer)
            finally:
                self._open -= 1
        except (_Closed, OSError, TimeoutError, h11.ProtocolError):
            pass  # OSError: ConnectionError and ssl.SSLError too
        except anyio.get_cancelled_exc_class():
            writer.transport.abort()  # the door stops: a client that stopped reading holds nothing
            raise
        except Exception:  # a bug of ours: this connection ends, the door serves on (B8)
            logger.exception("a connection failed; it was closed")
        finally:
            writer.close()  # never blocks: what is buffered still goes out

    async def _exchanges(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Requests and responses on one connection, while the client keeps it alive."""
        conn = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)
        while True:
            response = await self._respond(conn, reader, writer)
            if response is None:
                return
            await self._send(conn, reader, writer, response)
            if conn.their_state in (h11.SEND_BODY, h11.ERROR):
                await _linger(reader)
            if conn.our_state is not h11.DONE or conn.their_state is not h11.DONE:
                return
            conn.start_next_cycle()

    async def _busy(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection over MAX_CONNECTIONS: 503 at once, before reading anything."""
        busy = refusal(503, "BUSY", "too many connections; try again")
        with anyio.move_on_after(LINGER_S / 4):
            await self._send(h11.Connection(h11.SERVER), reader, writer, busy)
            if writer.can_write_eof():
                writer.write_eof()
            await _linger(reader)

    async def _respond(
        self, conn: h11.Connection, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> Response | None:
        """The next request's response; None when the client is done with the connection."""
        try:
            with anyio.fail_after(HEAD_S):
                event = await _next_event(conn, reader, HEAD_CHUNK)
            if isinstance(event, h11.ConnectionClosed):
                return None
            assert isinstance(event, h11.Request)
            request = _request(event)
            assert self.admit is not None and self.handle is not None
            admitted = self.admit(request)
            if isinstance(admitted, Response):
                admitted.headers["connection"] = "close"  # its body is never read
                return admitted
            length = request.headers.get("content-length", "0")
            if not length.isdigit() or int(length) > admitted:
                return _too_large(admitted)
            if conn.they_are_waiting_for_100_continue:
                writer.write(
                    conn.send(h11.InformationalResponse(status_code=100, headers=[])) or b""
                )
            body = bytearray()
            with anyio.fail_after(BODY_S):
                while not isinstance(event := await _next_event(conn, reader), h11.EndOfMessage):
                    if isinstance(event, h11.ConnectionClosed):
                        return None
                    assert isinstance(event, h11.Data)
                    body += event.data
                    if len(body) > admitted:
                        return _too_large(admitted)
        except h11.RemoteProtocolError as exc:
            if conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
                raise _Closed from exc
            return refusal(exc.error_status_hint, "BAD_REQUEST", "not a valid HTTP request")
        request.body = bytes(body)
        try:
            response = await self.handle(request)
        except Exception:  # a bug of ours: this request fails, the door keeps serving (B8)
            logger.exception("%s %s failed", request.method, request.path)
            return refusal(500, "INTERNAL", "the door failed on this request; see its log")
        if request.method == "HEAD":
            response.body, response.stream = b"", None
        return response

    async def _send(
        self,
        conn: h11.Connection,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        response: Response,
    ) -> None:
        headers = [("content-type", response.content_type)]
        headers += {**SECURITY_HEADERS, **response.headers}.items()
        if response.stream is None:
            headers.append(("content-length", str(len(response.body))))
        status = response.status
        head = h11.Response(status_code=status, headers=headers, reason=_reason(status))
        writer.write(conn.send(head) or b"")
        if response.stream is None:
            writer.write(conn.send(h11.Data(data=response.body)) or b"")
        else:
            await writer.drain()
            await _stream(conn, reader, writer, response.stream)
        writer.write(conn.send(h11.EndOfMessage()) or b"")
        await writer.drain()


async def _linger(reader: asyncio.StreamReader) -> None:
    """Read (and drop) what the client still sends after a refusal, for a while, before
    closing: closing with unread input makes the kernel reset the connection, and the
    client would see a reset instead of our 413 or 400."""
    dropped = 0
    with anyio.move_on_after(LINGER_S):
        while dropped < LINGER_BYTES and (chunk := await reader.read(READ_CHUNK)):
            dropped += len(chunk)


async def _next_event(
    conn: h11.Connection, reader: asyncio.StreamReader, chunk: int = READ_CHUNK
) -> Any:
    while True:
        event = conn.next_event()
        if event is not h11.NEED_DATA:
            return event
        conn.receive_data(await reader.read(chunk))  # b"": end of input


async def _stream(
    conn: h11.Connection,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    body: Callable[[Write], Awaitable[None]],
) -> None:
    def write(data: bytes) -> None:
        if writer.is_closing():
            return  # the client went away: until_closed ends the body
        if writer.transport.get_write_buffer_size() > MAX_BACKLOG:
            writer.transport.abort()
            return
        writer.write(conn.send(h11.Data(data=data)) or b"")

    closed = False

    async def until_closed() -> None:
        # Nothing more is expected from an event stream's client: end of input (or an
        # error) means the page went away, so its claims end now (C4), not at the next
        # keepalive write.
        nonlocal closed
        try:
            while await reader.read(READ_CHUNK):
                pass
        except OSError:
            pass
        closed = True
        tg.cancel_scope.cancel()

    async def run_body() -> None:
        await body(write)
        tg.cancel_scope.cancel()

    async with anyio.create_task_group() as tg:
        tg.start_soon(until_closed)
        tg.start_soon(run_body)
    if closed:
        raise _Closed


def _request(event: h11.Request) -> Request:
    headers: dict[str, str] = {}
    for name, value in event.headers:
        key = name.decode("latin-1")
        text = value.decode("latin-1")
        headers[key] = f"{headers[key]}; {text}" if key == "cookie" and key in headers else text
    target, _, query = event.target.decode("latin-1").partition("?")
    params = {name: values[0] for name, values in parse_qs(query).items()}
    return Request(event.method.decode("latin-1"), unquote(target), headers, query=params)


def _reason(status: int) -> bytes:
    try:
        return HTTPStatus(status).phrase.encode()
    except ValueError:
        return b""


def _too_large(limit: int) -> Response:
    return refusal(413, "HTTP", f"this request's body is at most {limit} bytes")
