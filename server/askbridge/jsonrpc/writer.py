"""Writing JSON-RPC messages to a stream, LSP-framed or one per line, coalesced and bounded.

`MessageWriter(stream, frame=lsp_frame)` (or `frame=line_frame` for ACP and
MCP) encodes each message once — compact UTF-8 JSON, NaN refused, params a
door encoded once for several peers spliced in (encoding.py) — and queues
whole frames, so frames never interleave and leave in the order queued.

Frames are coalesced: each is appended to a buffer that goes to the transport
in one write, because every pipe write wakes the reader (a context switch on
each side), which costs more than the encoding; when, is flushing.py's (one
callback and one timer per loop for all writers). Requests and replies
(`urgent`, the default) go out on the next event-loop iteration together with
everything else queued in the current one. Notifications (`urgent=False`)
— a withdrawn request's cancel among them — wait for the next urgent frame or
at most `notify_delay` seconds, so a turn's `session/update`s, and the
`$/cancelRequest` of the card another window answered, ride along with the
`userQuestions/ask` that follows them: one write per window per question.
`flush()` writes the buffer at once (whoever closes the stream calls it
first). Nothing else may write to the same stream: bytes written past the
buffer would overtake the frames held in it.

Bounded memory per client (S7): `queued()` counts what waits for the client
(this buffer and the transport's). The connection stops reading a client's
input while more than `PAUSE_READING_BYTES` are queued (`wait_writable`), and
a client that lets more than `MAX_QUEUED_BYTES` pile up — it stopped reading
while other sessions keep sending it updates — is cut off: `write_nowait`
raises `OutputOverflow` (a ConnectionError), and the connection closes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .encoding import Framer, frame_message
from .flushing import Flushes, flushes_of

PAUSE_READING_BYTES = 4 * 1024 * 1024
MAX_QUEUED_BYTES = 64 * 1024 * 1024
FLUSH_BYTES = 64 * 1024


def lsp_frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def line_frame(body: bytes) -> bytes:
    # json.dumps escapes every control character inside strings: a body has no newline.
    return body + b"\n"


class OutputOverflow(ConnectionError):
    """The client stopped reading and more than MAX_QUEUED_BYTES wait for it (S7)."""


class MessageWriter:
    def __init__(
        self,
        writer: asyncio.StreamWriter,
        frame: Framer = lsp_frame,
        *,
        notify_delay: float = 0.001,
        max_queued: int = MAX_QUEUED_BYTES,
    ) -> None:
        self._writer = writer
        self._frame = frame
        self._notify_delay = notify_delay
        self._max_queued = max_queued
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._flushes: Flushes | None = None  # the loop's (flushing.py), once first needed
        self._flush_urgent = False  # a flush is due in the next loop turn
        self._holding = False  # notifications wait, at most notify_delay
        self._transport = transport = writer.transport
        # drain() waits while more than this is in the transport: it is what pauses
        # the connection's reader (wait_writable) and any task writing a reply.
        transport.set_write_buffer_limits(high=PAUSE_READING_BYTES, low=PAUSE_READING_BYTES // 4)

    def queued(self) -> int:
        """Bytes waiting for the client: held here and in the transport."""
        return self._buffered + self._transport.get_write_buffer_size()

    def write_nowait(self, obj: Any, *, urgent: bool = True) -> None:
        """Queue one message without waiting for the client to read it.

        Safe from a cancelled task ($/cancelRequest) and from sync callbacks.
        Raises TypeError/ValueError if `obj` is not JSON (nothing is queued then),
        ConnectionError if the output is closed or overflowing (S7).
        """
        data = frame_message(obj, self._frame)
        transport = self._transport  # 39 messages a question with 10 windows: no detours
        if transport.is_closing():
            raise ConnectionResetError("output closed")
        size = len(data)
        if self._buffered + size + transport.get_write_buffer_size() > self._max_queued:
            raise OutputOverflow(f"more than {self._max_queued} bytes queued for the client")
        self._buffer.append(data)
        self._buffered += size
        if self._buffered >= FLUSH_BYTES:
            self.flush()
        elif self._flush_urgent:
            pass  # whatever comes now leaves with it
        elif urgent:
            self._flush_urgent = True
            self._scheduler().next_turn(self)
        elif not self._holding:
            self._holding = True
            self._scheduler().hold(self, self._notify_delay)

    def _scheduler(self) -> Flushes:
        if self._flushes is None:
            self._flushes = flushes_of(asyncio.get_running_loop())
        return self._flushes

    def flush(self) -> None:
        """Hand every queued frame to the transport now, in one write."""
        self._flush_urgent = False  # a flush still due in the next turn finds nothing
        if self._holding:
            self._holding = False
            assert self._flushes is not None
            self._flushes.release(self)
        if not self._buffer:
            return
        data = self._buffer[0] if len(self._buffer) == 1 else b"".join(self._buffer)
        self._buffer.clear()
        self._buffered = 0
        if not self._transport.is_closing():
            self._transport.write(data)

    async def write(self, obj: Any) -> None:
        """Queue one message, then wait while the transport holds more than its high mark."""
        self.write_nowait(obj)
        await self._writer.drain()

    async def drain(self) -> None:
        await self._writer.drain()

    def writable(self) -> bool:
        """Whether the reader may go on without `wait_writable` (S7)."""
        return self.queued() <= PAUSE_READING_BYTES

    async def wait_writable(self) -> None:
        """Return once less than PAUSE_READING_BYTES wait for the client (S7)."""
        if self.queued() > PAUSE_READING_BYTES:
            self.flush()
            await self._writer.drain()

    def is_closing(self) -> bool:
        return self._writer.is_closing()

    def close(self) -> None:
        self.flush()
        self._writer.close()
