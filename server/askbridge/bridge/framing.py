"""LSP base-protocol framing over asyncio streams: `Content-Length: N\\r\\n\\r\\n` + UTF-8 JSON.

`FrameReader` turns a byte stream into `Frame`s — a body to parse, or a problem
the dispatcher answers (protocol.md "Errors"):

- header names are case-insensitive; headers other than Content-Length are ignored;
- a body above `max_body` (8 MiB) yields an OVERSIZED frame, then exactly that
  many bytes are discarded unparsed, chunk by chunk, and reading continues;
- a malformed header block (garbage line, missing/invalid/conflicting
  Content-Length, a block over 64 KiB, bare-LF line ends) yields one
  MALFORMED_HEADER frame, then the reader resyncs at the next `Content-Length:`
  (any case) after the bad line (or after the whole block when its
  Content-Length is bad). It searches anywhere, not only at line starts, because
  frames are sent back to back: the next header usually follows a body with no
  newline in between;
- end of input ends the iteration; a truncated final header or body is dropped.

The reader keeps its own buffer and slices every complete frame out of each
chunk without further awaits, which is what makes this loop faster than
pygls's thread-pooled reader. Cancelling `next_frame()` loses no bytes.

`FrameWriter` queues whole frames (they never interleave) and hands each
event-loop iteration's frames to the transport in one write (notifications may
wait up to 1 ms for company); `write()` then awaits `drain()`, so only the
writing task waits on a slow client.
`open_stdio()` wires fd 0/1 (dup'd) to asyncio streams for `askbridge serve`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import stat
import sys
import threading
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, NamedTuple

logger = logging.getLogger("askbridge.bridge")

MAX_BODY = 8 * 1024 * 1024
MAX_HEADER = 64 * 1024
_CHUNK = 64 * 1024
_END_OF_HEADER = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name
_MAX_LENGTH_DIGITS = 18


class FrameProblem(StrEnum):
    OVERSIZED = "oversized"
    MALFORMED_HEADER = "malformed_header"


@dataclass(frozen=True, slots=True)
class Frame:
    """One unit of input: a body (`problem is None`) or a framing problem with a detail."""

    body: bytes = b""
    problem: FrameProblem | None = None
    detail: str = ""


class BadHeader(NamedTuple):
    """Why a header block is malformed, and the offset in it where resync starts searching."""

    reason: str
    resume: int


def parse_header_block(block: bytes) -> int | BadHeader:
    """The Content-Length of a header block (CRLF-separated lines, no final blank line).

    A garbage line resumes the search right after itself (a valid header may
    follow it); a bad Content-Length resumes after the whole block.
    """
    length: int | None = None
    after_block = len(block) + len(_END_OF_HEADER)
    start = 0
    for line in block.split(b"\r\n"):
        start += len(line) + 2
        if not line:
            continue  # stray CRLFs between frames are harmless
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            return BadHeader(f"not a header line: {line[:80]!r}", start - 2)
        if name.lower() != b"content-length":
            continue
        value = value.strip(b" \t")
        if not value.isdigit() or len(value) > _MAX_LENGTH_DIGITS:
            return BadHeader(f"invalid Content-Length: {value[:40]!r}", after_block)
        if length is not None and length != int(value):
            return BadHeader("conflicting Content-Length headers", after_block)
        length = int(value)
    return BadHeader("missing Content-Length", after_block) if length is None else length


class FrameReader:
    """Async iterator of `Frame`s read from `reader`; never raises on bad input."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        max_body: int = MAX_BODY,
        max_header: int = MAX_HEADER,
        unread: bytes = b"",
    ) -> None:
        """`unread`: input taken from the stream before (early.py); it is parsed first."""
        self._reader = reader
        self._max_body = max_body
        self._max_header = max_header
        self._buf = bytearray(unread)
        self._pos = 0  # start of unconsumed bytes in _buf
        self._body_len: int | None = None  # header parsed, waiting for this many body bytes
        self._skip = 0  # bytes of an oversized body still to discard
        self._resyncing = False

    def __aiter__(self) -> FrameReader:
        return self

    async def __anext__(self) -> Frame:
        frame = await self.next_frame()
        if frame is None:
            raise StopAsyncIteration
        return frame

    async def next_frame(self) -> Frame | None:
        """The next frame, or None at end of input."""
        while True:
            if self._skip:
                if not await self._discard():
                    return None
                continue
            frame = self._parse()
            if frame is not None:
                return frame
            if not await self._fill():
                if len(self._buf) > self._pos:
                    logger.debug("input ended inside a frame; %d bytes dropped", self._unread)
                return None

    @property
    def _unread(self) -> int:
        return len(self._buf) - self._pos

    async def _fill(self) -> bool:
        if self._pos:
            del self._buf[: self._pos]
            self._pos = 0
        chunk = await self._reader.read(_CHUNK)
        self._buf += chunk
        return bool(chunk)

    async def _discard(self) -> bool:
        """Drop oversized-body bytes without keeping more than one chunk; False at EOF."""
        taken = min(self._skip, self._unread)
        self._pos += taken
        self._skip -= taken
        while self._skip:
            chunk = await self._reader.read(min(self._skip, _CHUNK))
            if not chunk:
                return False
            self._skip -= len(chunk)
        return True

    def _parse(self) -> Frame | None:
        """Slice the next frame out of the buffer, or None when more bytes are needed."""
        while self._body_len is None:
            if self._resyncing and not self._resync():
                return None
            end = self._buf.find(_END_OF_HEADER, self._pos)
            bare_lf = self._buf.find(b"\n\n", self._pos, end if end >= 0 else len(self._buf))
            if bare_lf >= 0:
                return self._malformed("header lines must end with CRLF", bare_lf + 2)
            if end < 0 or end - self._pos > self._max_header:
                if self._unread <= self._max_header:
                    return None
                reason = f"no end of header within {self._max_header} bytes"
                return self._malformed(reason, self._pos + 1)
            block = bytes(self._buf[self._pos : end])
            parsed = parse_header_block(block) if block.strip(b"\r\n") else None
            if isinstance(parsed, BadHeader):
                return self._malformed(parsed.reason, self._pos + parsed.resume)
            self._pos = end + len(_END_OF_HEADER)
            if parsed is None:
                continue  # only blank lines between frames: skip quietly
            if parsed > self._max_body:
                self._skip = parsed
                return Frame(
                    problem=FrameProblem.OVERSIZED,
                    detail=f"Content-Length {parsed} exceeds {self._max_body}",
                )
            self._body_len = parsed
        if self._unread < self._body_len:
            return None
        start, self._pos = self._pos, self._pos + self._body_len
        self._body_len = None
        return Frame(body=bytes(self._buf[start : self._pos]))

    def _malformed(self, detail: str, resume: int) -> Frame:
        self._pos = resume
        self._resyncing = True
        logger.warning("malformed LSP header block: %s", detail)
        return Frame(problem=FrameProblem.MALFORMED_HEADER, detail=detail)

    def _resync(self) -> bool:
        found = _CONTENT_LENGTH.search(self._buf, self._pos)
        if found is None:
            # Keep a tail that may hold the start of a split `Content-Length:`.
            keep = len(_CONTENT_LENGTH.pattern) - 1
            self._pos = max(self._pos, len(self._buf) - keep)
            return False
        self._pos = found.start()
        self._resyncing = False
        return True


class FrameWriter:
    """Writes JSON values as frames; frames never interleave and leave in the order queued.

    Frames are coalesced: each is appended to a buffer that goes to the transport in
    one write, because every pipe write wakes the reader (a context switch on each
    side), which costs more than the encoding. Requests and replies (`urgent`, the
    default) go out on the next event-loop iteration, together with everything else
    queued in the current one. Notifications (`urgent=False`) wait for the next
    urgent frame or at most `notify_delay` seconds, so a turn's `session/update`s
    ride along with the `userQuestions/ask` that follows them. `flush()` writes the
    buffer at once (whoever closes the stream must call it first); a buffer
    reaching `FLUSH_BYTES` is flushed at once so that `drain()` keeps applying
    backpressure. Nothing else may write to the same stream: bytes written past
    the buffer would overtake the frames held in it.
    """

    FLUSH_BYTES = 64 * 1024

    def __init__(self, writer: asyncio.StreamWriter, notify_delay: float = 0.001) -> None:
        self._writer = writer
        self._notify_delay = notify_delay
        self._buffer: list[bytes] = []
        self._buffered = 0
        self._flush_handle: asyncio.Handle | None = None
        self._flush_urgent = False

    def write_nowait(self, obj: Any, *, urgent: bool = True) -> None:
        """Queue one frame without waiting for the client to read it.

        Safe from a cancelled task ($/cancelRequest) and from sync callbacks.
        Raises TypeError/ValueError if `obj` is not JSON (nothing is queued then),
        ConnectionError if the output is closed.
        """
        body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        data = body.encode()
        if self._writer.is_closing():
            raise ConnectionResetError("output closed")
        self._buffer.append(b"Content-Length: %d\r\n\r\n%b" % (len(data), data))
        self._buffered += len(data)
        if self._buffered >= self.FLUSH_BYTES:
            self.flush()
        elif urgent and not self._flush_urgent:
            if self._flush_handle is not None:
                self._flush_handle.cancel()
            self._flush_handle = asyncio.get_running_loop().call_soon(self.flush)
            self._flush_urgent = True
        elif self._flush_handle is None:
            loop = asyncio.get_running_loop()
            self._flush_handle = loop.call_later(self._notify_delay, self.flush)

    def flush(self) -> None:
        """Hand every queued frame to the transport now, in one write."""
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        self._flush_urgent = False
        if not self._buffer:
            return
        data = self._buffer[0] if len(self._buffer) == 1 else b"".join(self._buffer)
        self._buffer.clear()
        self._buffered = 0
        if not self._writer.is_closing():
            self._writer.write(data)

    async def write(self, obj: Any) -> None:
        """Queue one frame, then wait while the transport's buffer is over its high-water mark."""
        self.write_nowait(obj)
        await self._writer.drain()

    async def drain(self) -> None:
        await self._writer.drain()

    def is_closing(self) -> bool:
        return self._writer.is_closing()


class _WritePipeProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for a write-only pipe, with the close waiter StreamWriter.wait_closed needs."""

    def __init__(self) -> None:
        super().__init__()
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed.done():
            self._closed.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self._closed


_copiers: list[threading.Thread] = []


def _is_regular_file(fd: int) -> bool:
    return stat.S_ISREG(os.fstat(fd).st_mode)


def _copy_in_thread(src: int, dst: int) -> None:
    """Copy src to dst until EOF, then close both: asyncio cannot poll regular files."""

    def run() -> None:
        try:
            while chunk := os.read(src, _CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
        except OSError:
            pass
        finally:
            os.close(src)
            os.close(dst)

    thread = threading.Thread(target=run, name="askbridge-stdio-copy", daemon=True)
    thread.start()
    _copiers.append(thread)


def join_copiers(timeout: float = 5.0) -> None:
    """Wait for file copies started by open_read_pipe/open_write_pipe (after closing writers)."""
    for thread in _copiers:
        thread.join(timeout)


async def open_read_pipe(fd: int, limit: int = _CHUNK) -> asyncio.StreamReader:
    """A StreamReader on `fd` (takes ownership of the fd).

    A regular file (`askbridge serve < requests.bin`) is fed through a pipe by a
    thread, since asyncio can only poll pipes, sockets and ttys.
    """
    if _is_regular_file(fd):
        r, w = os.pipe()
        _copy_in_thread(fd, w)
        fd = r
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    pipe = os.fdopen(fd, "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return reader


async def open_write_pipe(fd: int) -> asyncio.StreamWriter:
    """A StreamWriter on `fd` (takes ownership of the fd); a regular file goes through a pipe."""
    if _is_regular_file(fd):
        r, w = os.pipe()
        _copy_in_thread(r, fd)
        fd = w
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(_WritePipeProtocol, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


def redirect_stdout_to_stderr() -> None:
    """Point fd 1 and sys.stdout at stderr, so stray prints (ours, libraries', child
    processes') can never corrupt the frame stream. Call only after fd 1 was dup'd."""
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr


async def open_stdio(
    redirect_stdout: bool = True,
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Streams on dup'd copies of fd 0 and fd 1; by default fd 1 then goes to stderr.

    stdin must be a pipe, socket or tty (asyncio cannot poll a regular file).
    """
    in_fd, out_fd = os.dup(0), os.dup(1)
    if redirect_stdout:
        redirect_stdout_to_stderr()
    return await open_read_pipe(in_fd), await open_write_pipe(out_fd)
