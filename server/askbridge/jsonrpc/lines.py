"""Reading newline-delimited JSON-RPC (ACP, MCP) from an asyncio stream, bounded (S7, S8).

`LineReader` yields the same `Frame`s as the LSP reader: a body to parse, or a
problem the connection answers with -32600 and `id: null`:

- one message per line; `\\r\\n` line ends are accepted, blank lines skipped;
- a line over `max_line` (8 MiB) yields one OVERSIZED frame and is discarded
  chunk by chunk up to its newline, never buffered whole; reading goes on with
  the next line;
- end of input ends the iteration; a final line without a newline is still a
  message (the client closed right after writing it).

What a line holds (not JSON, not an object, a batch, `null`) is the
connection's business: it answers -32700 / -32600 and keeps serving (S8).
"""

from __future__ import annotations

import asyncio

from .frames import MAX_BODY, ChunkReader, Frame, FrameProblem


class LineReader(ChunkReader):
    def __init__(self, reader: asyncio.StreamReader, max_line: int = MAX_BODY) -> None:
        super().__init__(reader)
        self._max_line = max_line
        self._discarding = False  # inside an oversized line, up to its newline
        self._eof = False

    async def next_frame(self) -> Frame | None:
        """The next line as a frame, or None at end of input."""
        while True:
            end = self._buf.find(b"\n", self._pos)
            if end >= 0:
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
                continue
            if self._discarding:
                self._pos = len(self._buf)  # still inside the oversized line: drop what we have
            elif self._unread > self._max_line:
                self._pos = len(self._buf)
                self._discarding = True
                return self._oversized()
            if self._eof:
                rest = bytes(self._buf[self._pos :]).strip()
                self._pos = len(self._buf)
                if rest and not self._discarding:
                    return Frame(body=rest)
                return None
            self._eof = not await self._fill()

    def _oversized(self) -> Frame:
        return Frame(
            problem=FrameProblem.OVERSIZED, detail=f"a line longer than {self._max_line} bytes"
        )
