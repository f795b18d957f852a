"""LSP frames as a test sees them: `frame()` to write one, `read_frame()` to read stdout strictly.

Separate from `RawServer` (wire.py), which sends and waits on messages, because
this is the one place that decides what counts as clean stdout; and separate
from the server's own reader (`askbridge.jsonrpc.framing`) on purpose: that one
forgives garbage and resyncs at the next header, this one raises
`StdoutCorrupted` on the first byte that is not `Content-Length: N\\r\\n\\r\\n`
followed by a JSON-RPC object (protocol.md "Command line": logs never go to stdout).
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

_HEADER = re.compile(rb"Content-Length: (\d{1,10})\r\n\r\n")


class StdoutCorrupted(AssertionError):
    """The server wrote something on stdout that is not an LSP frame holding JSON."""


def frame(body: bytes | str) -> bytes:
    """`body` framed as the LSP base protocol wants it."""
    data = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


async def read_frame(stdout: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next JSON-RPC message on `stdout`, or None at a clean end of output."""
    try:
        header = await stdout.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise StdoutCorrupted(f"stdout ended inside a header: {exc.partial[:200]!r}") from None
        return None
    except asyncio.LimitOverrunError as exc:
        raise StdoutCorrupted("stdout holds a header longer than the stream limit") from exc
    match = _HEADER.fullmatch(header)
    if match is None:
        raise StdoutCorrupted(f"not an LSP header on stdout: {header[:200]!r}")
    try:
        body = await stdout.readexactly(int(match.group(1)))
    except asyncio.IncompleteReadError as exc:
        raise StdoutCorrupted(f"stdout ended inside a body: {exc.partial[:200]!r}") from None
    try:
        message = json.loads(body)
    except ValueError as exc:
        raise StdoutCorrupted(f"a frame on stdout is not JSON: {body[:200]!r}") from exc
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        raise StdoutCorrupted(f"a frame on stdout is not a JSON-RPC message: {message!r}")
    return message
