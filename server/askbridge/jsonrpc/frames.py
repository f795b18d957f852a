"""What both framings share: the `Frame` a framer yields, the `Framer` interface, and reading
one from an asyncio stream (`StreamFrames`).

A framer (`framing.LspFramer` for LSP, `lines.LineFramer` for ACP and MCP) is sans-IO:
it is fed bytes and hands out frames, so the same code frames the bytes a transport
hands our protocol (`inbound.Inbound`, where a door's connection reads) and the bytes
a client reads from a stream (`FrameReader`, `LineReader`: `StreamFrames` over a
framer). Slicing frames only when asked keeps the bytes behind a frame unread until
it was handled (an LSP body that is not JSON is handed back with `resync_in`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

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


class Framer(Protocol):
    def feed(self, data: bytes) -> None: ...

    def feed_eof(self) -> None: ...

    def take(self) -> Frame | None:
        """The next frame, or None until more bytes are fed (for good after `feed_eof`)."""
        ...

    def unread(self) -> int:
        """Bytes fed and not yet taken."""
        ...


class Buffered:
    """The byte buffer a framer slices frames out of; what was taken is dropped as more
    is fed (subclasses define `take`)."""

    def __init__(self, unread: bytes = b"") -> None:
        self._buf = bytearray(unread)
        self._pos = 0  # start of unconsumed bytes in _buf
        self._eof = False

    def unread(self) -> int:
        return len(self._buf) - self._pos

    def feed(self, data: bytes) -> None:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        self._buf += data

    def feed_eof(self) -> None:
        self._eof = True


class StreamFrames:
    """Frames of `framer` over the bytes of `reader`, read 64 KiB at a time.

    Cancelling `next_frame()` loses no bytes: what was read is in the framer."""

    def __init__(self, reader: asyncio.StreamReader, framer: Framer) -> None:
        self.reader = reader
        self.framer = framer
        self._eof = False

    async def next_frame(self) -> Frame | None:
        """The next frame, or None at end of input."""
        while (frame := self.framer.take()) is None:
            if self._eof:
                return None
            await self.read_chunk()
        return frame

    async def read_chunk(self) -> bool:
        """Feed the framer one more chunk of the stream; False at end of input."""
        chunk = await self.reader.read(CHUNK)
        if chunk:
            self.framer.feed(chunk)
        else:
            self._eof = True
            self.framer.feed_eof()
        return bool(chunk)

    def __aiter__(self) -> StreamFrames:
        return self

    async def __anext__(self) -> Frame:
        frame = await self.next_frame()
        if frame is None:
            raise StopAsyncIteration
        return frame
