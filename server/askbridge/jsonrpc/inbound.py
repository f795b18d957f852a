"""Where a door's connection reads: an `asyncio.Protocol` that frames the bytes its
transport hands it and dispatches them in order (S7, S8).

    inbound = await stdio.open_inbound(fd)           # the protocol of a read pipe
    conn = lsp_connection(inbound, writer)            # picks its framer (`use`)
    await conn.serve()                                # `Inbound.serve`: the read task

The read task used to wait on an `asyncio.StreamReader`: an answer's bytes arrived in
one loop turn (`data_received` woke the reader's waiter) and were dispatched in the
next. Here `data_received` frames them at once and hands each body to `on_body`
right there; what `on_body` finishes by itself (a response to our own request, a
refusal) is done in that same turn. What it returns to wait for (a request's start,
a notification's handler) goes to the read task, and no later frame is taken until
that is done: frames are handled in arrival order, and a request's handler starts
before the next message is read (`Connection._on_request`). The bytes behind stay in
the framer, so an LSP body handed back with `resync_in` is read before them.

- S7: while more than `PAUSE_READING_BYTES` of output wait for the peer, the
  transport is paused (`pause_reading`) until they drain, and resumed after; while
  the read task is busy it is paused once 128 KiB are buffered (as the stream was).
- S8: a problem frame (oversized, malformed header) is answered -32600 with `id:
  null` and reading goes on; an exception from a dispatch is logged and the next
  frame is taken: nothing raised in `data_received` reaches the transport.
- End of input ends `serve()` once every frame before it was handled; a transport
  lost with an error raises that error from `serve()` then, as the stream did.

A door reading an `asyncio.StreamReader` instead (a subprocess's stdout, a relay's
socket) gets the same loop: the read task feeds the framer from the stream
(`StreamFrames.read_chunk`) when it has nothing else to do.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NamedTuple, Protocol

from askbridge.protocol.errors import RpcErrorCode

from . import messages as m
from .frames import CHUNK, Frame, Framer, StreamFrames

logger = logging.getLogger("askbridge.jsonrpc")

HOLD_BYTES = 2 * CHUNK  # buffered while the read task is busy, before the transport pauses

OnBody = Callable[[bytes], Awaitable[None] | None]


class Writable(Protocol):
    def writable(self) -> bool: ...

    async def wait_writable(self) -> None: ...


class _Serving(NamedTuple):
    out: Writable
    on_body: OnBody
    reply: Callable[[dict[str, Any]], None]
    running: Callable[[], bool]


class Inbound(asyncio.Protocol):
    def __init__(self, framer: Framer | None = None, stream: StreamFrames | None = None) -> None:
        """`framer`: now or later (`use`); `stream`: read from it instead of a transport."""
        self.framer = framer
        self._stream = stream
        self._early: list[bytes] = []  # received before a framer was chosen
        self._transport: asyncio.ReadTransport | None = None
        self._paused = False
        self._output_wait = False  # S7: the read task waits for the output to drain
        self._ended = False
        self._error: BaseException | None = None  # why the transport was lost
        self._serving: _Serving | None = None  # while serve() runs
        self._busy = False  # the read task holds a frame's work: later frames wait
        self._work: Awaitable[None] | None = None
        self._waiter: asyncio.Future[None] | None = None

    @classmethod
    def over(cls, source: Inbound | asyncio.StreamReader, framer: Framer) -> Inbound:
        """`source` framed by `framer`: an `Inbound` takes it, a stream is read by serve()."""
        if isinstance(source, Inbound):
            source.use(framer)
            return source
        return cls.of(StreamFrames(source, framer))

    @classmethod
    def of(cls, frames: StreamFrames) -> Inbound:
        return cls(frames.framer, frames)

    def use(self, framer: Framer) -> None:
        if self.framer is not None:
            raise RuntimeError("this input already has its framer")
        self.framer = framer
        for chunk in self._early:
            framer.feed(chunk)
        self._early.clear()
        if self._ended:
            framer.feed_eof()

    # -- the transport's side ---------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self._transport = transport

    def data_received(self, data: bytes) -> None:
        framer = self.framer
        if framer is None:
            self._early.append(data)
        else:
            framer.feed(data)
            if self._serving is not None and not self._busy:
                self._pump()
        if self._busy or self._paused or self._serving is None:  # else: nothing to pause
            self._flow()

    def eof_received(self) -> bool | None:
        self._end()
        return None  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        if exc is not None and not self._ended:
            self._error = exc
        self._end()

    def _end(self) -> None:
        if self._ended:
            return
        self._ended = True
        if self.framer is not None:
            self.framer.feed_eof()
            if self._serving is not None and not self._busy:
                self._pump()
        self._wake()

    # -- the read task ----------------------------------------------------------------

    async def serve(
        self,
        out: Writable,
        on_body: OnBody,
        reply: Callable[[dict[str, Any]], None],
        running: Callable[[], bool] = lambda: True,
    ) -> None:
        """Dispatch every frame until end of input (or until `running()` is False): each
        body to `on_body` (awaiting what it returns before the next frame), each problem
        frame answered -32600 with `id: null` through `reply`."""
        if self.framer is None or self._serving is not None:
            raise RuntimeError("serve() needs a framer and runs once at a time")
        self._serving = _Serving(out, on_body, reply, running)
        try:
            while True:
                if not self._busy:
                    self._pump()
                work = self._work
                if work is not None:
                    self._work = None
                    self._flow()
                    try:
                        await work
                    finally:
                        self._busy = self._output_wait = False
                elif not running():
                    return
                elif self._ended:
                    if self._error is not None:
                        raise self._error
                    return
                else:
                    self._flow()
                    await self._more()
        finally:
            self._serving = None
            self._busy = self._output_wait = False
            if isinstance(self._work, Coroutine):
                self._work.close()  # handed over as serve() was cancelled: never started
            self._work = None
            self._flow()

    async def _more(self) -> None:
        """Wait until the transport brings work or the end (or read the stream once)."""
        if self._stream is not None:
            if not await self._stream.read_chunk():
                self._ended = True
            return
        self._waiter = asyncio.get_running_loop().create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _pump(self) -> None:
        """Dispatch the frames buffered, in order, until one has work for the read task."""
        serving, framer = self._serving, self.framer
        assert serving is not None and framer is not None
        while serving.running():
            if not serving.out.writable():  # S7: a peer that does not read waits
                self._output_wait = True
                self._hand(serving.out.wait_writable())
                return
            frame = framer.take()
            if frame is None:
                if self._ended:
                    self._wake()
                return
            try:
                work = _dispatch(frame, serving)
            except Exception:
                logger.exception("dispatching a frame failed; reading goes on")
                continue
            if work is not None:
                self._hand(work)
                return
        self._wake()

    def _hand(self, work: Awaitable[None]) -> None:
        self._busy = True
        self._work = work
        self._wake()

    def _flow(self) -> None:
        """Pause the transport while output backs up (S7), or while the read task is busy
        (or not reading) and enough is buffered; resume it otherwise."""
        if self._transport is None:
            return
        if self._output_wait:
            hold = True
        elif self._busy or self._serving is None:
            framer = self.framer
            unread = framer.unread() if framer is not None else sum(map(len, self._early))
            hold = unread > HOLD_BYTES
        else:
            hold = False
        if hold != self._paused:
            self._paused = hold
            if hold:
                self._transport.pause_reading()
            else:
                self._transport.resume_reading()


def _dispatch(frame: Frame, serving: _Serving) -> Awaitable[None] | None:
    if frame.problem is None:
        return serving.on_body(frame.body)
    detail = f"{frame.problem.value}: {frame.detail}"
    logger.warning("refused a frame: %s", detail)
    serving.reply(m.error(None, RpcErrorCode.INVALID_REQUEST, detail))
    return None
