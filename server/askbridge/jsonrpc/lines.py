"""Reading newline-delimited JSON-RPC (ACP, MCP), bounded (S7, S8).

`LineFramer` (sans-IO: bytes in, `Frame`s out) yields the same `Frame`s as the
LSP framer: a body to parse, or a problem the connection answers with -32600
and `id: null`:

- one message per line; `\\r\\n` line ends are accepted, blank lines skipped;
- a line over `max_line` (8 MiB) yields one OVERSIZED frame and is discarded
  chunk by chunk up to its newline, never buffered whole; reading goes on with
  the next line;
- end of input ends the iteration; a final line without a newline is still a
  message (the client closed right after writing it).

What a line holds (not JSON, not an object, a batch, `null`) is the
connection's business: it answers -32700 / -32600 and keeps serving (S8).
`LineReader` is the same framing read from an asyncio stream.
"""

from __future__ import annotations

import asyncio

from .frames import MAX_BODY, Buffered, Frame, FrameProblem, StreamFrames


class LineFramer(Buffered):
    def __init__(self, max_line: int = MAX_BODY) -> None:
        super().__init__()
        self._max_line = max_line
        self._discarding = False  # inside an oversized line, up to its newline

    def take(self) -> Frame | None:
        """The next line as a frame, or None until more bytes are fed (for good after
        `feed_eof`)."""
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end < 0:
                return self._without_newline()
            line = bytes(self._buf[self._pos : end])
            self._pos = end + 1
            if self._discarding:
                self._discarding = False
                continue
            if len(line) > self._max_line:
                return self._oversized()
            line = line.rstrip(b"\r")
            if line.strip():
                return Frame(body=line)

    def _without_newline(self) -> Frame | None:
        if self._discarding:
            self._pos = len(self._buf)  # still inside the oversized line: drop what we have
        elif self.unread() > self._max_line:
            self._pos = len(self._buf)
            self._discarding = True
            return self._oversized()
        if not self._eof:
            return None
        rest = bytes(self._buf[self._pos :]).strip()
        self._pos = len(self._buf)
        return Frame(body=rest) if rest and not self._discarding else None

    def _oversized(self) -> Frame:
        return Frame(
            problem=FrameProblem.OVERSIZED, detail=f"a line longer than {self._max_line} bytes"
        )


class LineReader(StreamFrames):
    """Async iterator of line `Frame`s read from `reader` (a client's side, the tests')."""

    def __init__(self, reader: asyncio.StreamReader, max_line: int = MAX_BODY) -> None:
        super().__init__(reader, LineFramer(max_line))
