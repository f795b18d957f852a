"""LSP base-protocol framing: `Content-Length: N\\r\\n\\r\\n` + JSON.

`LspFramer` (sans-IO: fed bytes, it hands out frames) turns a byte stream into
`Frame`s — a body to parse, or a problem the dispatcher answers (protocol.md
"Errors"):

- header names are case-insensitive; headers other than Content-Length are ignored;
- a body above `max_body` (8 MiB) yields an OVERSIZED frame, then exactly that
  many bytes are discarded unparsed as they are fed, and reading continues;
- a malformed header block (garbage line, missing/invalid/conflicting
  Content-Length, a block over 64 KiB, bare-LF line ends) yields one
  MALFORMED_HEADER frame, then the reader resyncs at the next `Content-Length:`
  (any case) wherever it starts (S8) — inside the bad line too, because frames
  are sent back to back: after a too-short Content-Length the next header
  follows the rest of the body on the same line — or after the whole block
  when its own Content-Length is bad;
- a body that turns out not to be JSON may have swallowed the start of the next
  frame (a too-long Content-Length): the dispatcher hands it back with
  `resync_in(body)`, and reading resumes at the first `Content-Length:` in it;
- end of input ends the iteration; a truncated final header or body is dropped;
- with `on_foreign_start`, an input whose first line is no header (an ACP or MCP
  client's newline-delimited JSON, a stray line) is reported once, as soon as
  that is clear (`wrong_door.foreign_start`), and read as any other.

The framer keeps its own buffer and slices every complete frame out of what it
was fed, which is what makes reading faster than pygls's thread-pooled reader.
A door's connection feeds it from its read transport (`inbound.Inbound`); a
client reads it from a stream with `FrameReader` (cancelling `next_frame()`
loses no bytes).

Writing is `writer.MessageWriter`; newline framing (ACP, MCP) is `lines.LineFramer`.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from typing import NamedTuple

from .frames import MAX_BODY, Buffered, Frame, FrameProblem, StreamFrames
from .wrong_door import foreign_start

logger = logging.getLogger("askbridge.jsonrpc")

MAX_HEADER = 64 * 1024
_END_OF_HEADER = b"\r\n\r\n"
_CONTENT_LENGTH = re.compile(rb"content-length:", re.IGNORECASE)
_TOKEN = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an HTTP header name
_MAX_LENGTH_DIGITS = 18
_USUAL_HEADER = b"Content-Length: "


class BadHeader(NamedTuple):
    """Why a header block is malformed, and the offset in it where resync starts searching."""

    reason: str
    resume: int


def parse_header_block(block: bytes) -> int | BadHeader:
    """The Content-Length of a header block (CRLF-separated lines, no final blank line).

    A garbage line, or a block without Content-Length, resumes the search at its own
    second byte: a valid header may start inside it (`nullContent-Length: 5` is one
    header name to a parser, S8); a bad Content-Length resumes after the whole block.
    """
    if block.startswith(_USUAL_HEADER):  # every client's one header: what the loop gives it
        value = block[len(_USUAL_HEADER) :]
        if value.isdigit() and len(value) <= _MAX_LENGTH_DIGITS:
            return int(value)
    length: int | None = None
    after_block = len(block) + len(_END_OF_HEADER)
    start = 0
    for line in block.split(b"\r\n"):
        start += len(line) + 2
        if not line:
            continue  # stray CRLFs between frames are harmless
        name, colon, value = line.partition(b":")
        if not colon or _TOKEN.fullmatch(name) is None:
            return BadHeader(f"not a header line: {line[:80]!r}", start - len(line) - 1)
        if name.lower() != b"content-length":
            continue
        value = value.strip(b" \t")
        if not value.isdigit() or len(value) > _MAX_LENGTH_DIGITS:
            return BadHeader(f"invalid Content-Length: {value[:40]!r}", after_block)
        if length is not None and length != int(value):
            return BadHeader("conflicting Content-Length headers", after_block)
        length = int(value)
    return BadHeader("missing Content-Length", 1) if length is None else length


_HEADER_NAME = b"content-length:"


def _header_prefix_tail(body: bytes) -> int | None:
    """Where the longest tail of `body` that starts `Content-Length:` begins, or None."""
    lowered = body[-len(_HEADER_NAME) :].lower()
    for size in range(len(lowered), 0, -1):
        if _HEADER_NAME.startswith(lowered[-size:]):
            return len(body) - size
    return None


class LspFramer(Buffered):
    """Sans-IO LSP framing: bytes in (`feed`, `feed_eof`), `Frame`s out (`take`).

    Never raises on bad input. A frame is sliced out only when `take()` is called, so a
    body handed back with `resync_in` is read before anything that follows it.
    """

    def __init__(
        self,
        max_body: int = MAX_BODY,
        max_header: int = MAX_HEADER,
        unread: bytes = b"",
        on_foreign_start: Callable[[str], None] | None = None,
    ) -> None:
        """`unread`: input taken from the stream before (early.py); it is parsed first.
        `on_foreign_start`: told (once) the hint when the input does not start as LSP."""
        super().__init__(unread)
        self._on_foreign_start = on_foreign_start  # None once the start was judged
        self._max_body = max_body
        self._max_header = max_header
        self._body_len: int | None = None  # header parsed, waiting for this many body bytes
        self._skip = 0  # bytes of an oversized body still to discard
        self._resyncing = False

    def feed(self, data: bytes) -> None:
        if self._skip and self._pos == len(self._buf):  # an oversized body: never buffered
            dropped = min(self._skip, len(data))
            self._skip -= dropped
            data = data[dropped:]
        super().feed(data)

    def take(self) -> Frame | None:
        """The next frame, or None until more bytes are fed (for good after `feed_eof`)."""
        if self._skip:
            dropped = min(self._skip, self.unread())
            self._pos += dropped
            self._skip -= dropped
            if self._skip:
                return None
        frame = self._parse()
        if frame is None and self._eof and self.unread():
            logger.debug("input ended inside a frame; %d bytes dropped", self.unread())
            self._pos = len(self._buf)
        return frame

    def resync_in(self, body: bytes) -> bool:
        """S8: `body` (just returned, not JSON) may hold the start of the next frame.

        Reading resumes at the first `Content-Length:` inside it, or at a tail of it
        that begins one (a too-long Content-Length cut the next header in two).
        False when there is neither.
        """
        found = _CONTENT_LENGTH.search(body)
        start = found.start() if found is not None else _header_prefix_tail(body)
        if start is None:
            return False
        self._buf[self._pos : self._pos] = body[start:]
        return True

    def _parse(self) -> Frame | None:
        """Slice the next frame out of the buffer, or None when more bytes are needed."""
        if self._on_foreign_start is not None:
            self._judge_start(self._on_foreign_start)
        while self._body_len is None:
            if self._resyncing and not self._resync():
                return None
            end = self._buf.find(_END_OF_HEADER, self._pos)
            bare_lf = self._buf.find(b"\n\n", self._pos, end if end >= 0 else len(self._buf))
            if bare_lf >= 0:
                return self._malformed("header lines must end with CRLF", bare_lf + 2)
            if end < 0 or end - self._pos > self._max_header:
                if len(self._buf) - self._pos <= self._max_header:
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
        if len(self._buf) - self._pos < self._body_len:  # unread(), inline: every frame
            return None
        start, self._pos = self._pos, self._pos + self._body_len
        self._body_len = None
        return Frame(body=bytes(self._buf[start : self._pos]))

    def _judge_start(self, report: Callable[[str], None]) -> None:
        hint = foreign_start(self._buf, self._eof)  # nothing was taken: the input's start
        if hint is None:
            return
        self._on_foreign_start = None
        if hint:
            logger.info("not LSP input: %s", hint)
            report(hint)

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


class FrameReader(StreamFrames):
    """Async iterator of LSP `Frame`s read from `reader` (a client's side, the tests')."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        max_body: int = MAX_BODY,
        max_header: int = MAX_HEADER,
        unread: bytes = b"",
    ) -> None:
        self.framer: LspFramer
        super().__init__(reader, LspFramer(max_body, max_header, unread))

    def resync_in(self, body: bytes) -> bool:
        return self.framer.resync_in(body)
