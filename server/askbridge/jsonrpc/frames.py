"""What both framings share: the `Frame` a reader yields, its buffered chunk reading, and the
one loop that reads frames for a door (S7, S8).

A reader (`framing.FrameReader` for LSP, `lines.LineReader` for ACP and MCP)
is a `ChunkReader`: it keeps its own buffer, fills it 64 KiB at a time and
slices frames out of it. `read_frames` is the one read loop every door runs
on top of one: it stops reading while the peer does not read its output (S7),
answers a problem frame -32600 with `id: null` and goes on (S8), and hands
each body to the caller — `Connection` dispatches it, the MCP door decodes it
for the SDK.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from askbridge.protocol.errors import RpcErrorCode

from . import messages as m

logger = logging.getLogger("askbridge.jsonrpc")

MAX_BODY = 8 * 1024 * 1024
CHUNK = 64 * 1024


class FrameProblem(StrEnum):
    OVERSIZED = "oversized"
    MALFORMED_HEADER = "malformed_header"


@dataclass(frozen=True, slots=True)
class Frame:
    """One unit of input: a body (`problem is None`) or a framing problem with a detail."""

    body: bytes = b""
    problem: FrameProblem | None = None
    detail: str = ""


class FrameSource(Protocol):
    async def next_frame(self) -> Frame | None: ...

    def buffered_frame(self) -> Frame | None:
        """The next frame if its bytes are already buffered (no await), else None: then
        `next_frame()` reads on."""
        ...


class ChunkReader:
    """A buffered reader of `reader`; subclasses define `next_frame()`."""

    def __init__(self, reader: asyncio.StreamReader, unread: bytes = b"") -> None:
        self._reader = reader
        self._buf = bytearray(unread)
        self._pos = 0  # start of unconsumed bytes in _buf

    async def next_frame(self) -> Frame | None:
        raise NotImplementedError

    def buffered_frame(self) -> Frame | None:
        return None  # a reader that cannot tell: `next_frame()` every time

    def __aiter__(self) -> ChunkReader:
        return self

    async def __anext__(self) -> Frame:
        frame = await self.next_frame()
        if frame is None:
            raise StopAsyncIteration
        return frame

    @property
    def _unread(self) -> int:
        return len(self._buf) - self._pos

    async def _fill(self) -> bool:
        """Drop what was consumed and read one more chunk; False at end of input."""
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        chunk = await self._reader.read(CHUNK)
        self._buf += chunk
        return bool(chunk)


class Writable(Protocol):
    def writable(self) -> bool: ...

    async def wait_writable(self) -> None: ...


async def read_frames(
    frames: FrameSource,
    out: Writable,
    on_body: Callable[[bytes], Awaitable[None] | None],
    reply: Callable[[dict[str, Any]], None],
    running: Callable[[], bool] = lambda: True,
) -> None:
    """Read until end of input (or until `running()` is False): each body to `on_body`,
    each problem frame answered -32600 with `id: null` through `reply`.

    A chunk holds many frames when many sessions are busy (64 answers at once): the
    frames already buffered are taken, and bodies that need no waiting dispatched
    (`on_body` returns None: a response to our request), without a coroutine each."""
    while running():
        if not out.writable():
            await out.wait_writable()  # S7: a peer that does not read waits
        frame = frames.buffered_frame()
        if frame is None:
            frame = await frames.next_frame()
            if frame is None:
                return
        if frame.problem is None:
            handled = on_body(frame.body)
            if handled is not None:
                await handled
        else:
            detail = f"{frame.problem.value}: {frame.detail}"
            logger.warning("refused a frame: %s", detail)
            reply(m.error(None, RpcErrorCode.INVALID_REQUEST, detail))
