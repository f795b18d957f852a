"""The one JSON-RPC 2.0 core every door runs on (architecture.md `jsonrpc/`; S3, S7, S8).

- `framing.LspFramer`: LSP base-protocol frames in (8 MiB cap, header resync);
- `lines.LineFramer`: newline-delimited messages in, for ACP and MCP (8 MiB cap);
  both sans-IO; `FrameReader` and `LineReader` read them from an asyncio stream;
- `frames`: what both framers share;
- `inbound.Inbound`: the one read loop, an `asyncio.Protocol` on the door's read
  transport that dispatches a response in the turn its bytes arrive (S7, S8);
- `writer.MessageWriter`: messages out in either framing, coalesced, bounded;
  `flushing`: when, for every writer of a loop at once (one callback, one timer);
- `encoding`: the one JSON encoding out (compact UTF-8, by orjson: protocol/text.py);
- `messages`: decoding, message shapes, the one exception-to-wire mapping, the
  one rejection of a lone surrogate (S3);
- `outgoing.Outgoing`: the one outgoing-request engine every door's requests
  to its client go through — ids, timeouts, withdrawal, late replies (A9, L7);
- `connection.Connection`: dispatch, one task and cancel scope per incoming
  request, and an `Outgoing` for its requests.

Why not pygls's server or the ACP SDK's Connection: every layer either would
have given us needed replacing. pygls's stdin reader runs in a thread pool
(2–3× slower), answers invalid JSON with `window/showMessage` instead of
-32700, has no frame cap and drops a lowercase `content-length`; its
dispatcher turns custom params into namedtuples, shares one id table for both
directions, sends no `$/cancelRequest` for cancelled outgoing requests and
reports late replies as "Error in server". The ACP SDK's Connection crashes on
a line that is not a JSON object, treats `null` as end of input, answers
nothing to invalid JSON and buffers a line whole. The MCP SDK's dispatcher
drops a response to a request it stopped waiting for (a late reply, L7) and
its stdio transport has no input rules. pygls and both SDKs stay in the tests
as independent clients; the ACP and MCP doors keep their SDK's schema models.
Imports only `askbridge.protocol`.
"""

from asyncio import StreamReader, StreamWriter
from collections.abc import Callable

import anyio

from .connection import Connection
from .frames import MAX_BODY, Frame, FrameProblem
from .framing import FrameReader, LspFramer
from .inbound import Inbound
from .lines import LineFramer, LineReader
from .messages import ConnectionClosed, MalformedReply, RpcError, RpcResponseError
from .outgoing import (
    ACP,
    LSP,
    MCP,
    Dialect,
    LateReply,
    Outcome,
    Outgoing,
    client_failure,
    is_method_not_found,
)
from .writer import MessageWriter, line_frame, lsp_frame

__all__ = [
    "ACP",
    "LSP",
    "MAX_BODY",
    "MCP",
    "Connection",
    "ConnectionClosed",
    "Dialect",
    "Frame",
    "FrameProblem",
    "FrameReader",
    "Inbound",
    "Input",
    "LateReply",
    "LineFramer",
    "LineReader",
    "LspFramer",
    "MalformedReply",
    "MessageWriter",
    "Outcome",
    "Outgoing",
    "RpcError",
    "RpcResponseError",
    "client_failure",
    "is_method_not_found",
    "line_connection",
    "line_frame",
    "lsp_connection",
    "lsp_frame",
    "serve_then_close",
]


# What a door reads: the protocol of its read transport (stdio.open_inbound), or a stream.
Input = Inbound | StreamReader


def lsp_connection(
    reader: Input,
    writer: StreamWriter,
    unread: bytes = b"",
    on_foreign_start: Callable[[str], None] | None = None,
) -> Connection:
    """A connection speaking LSP-framed JSON-RPC (`askbridge serve`) on `reader`, `writer`;
    `on_foreign_start`: told once when its input does not start as LSP (wrong_door.py)."""
    inbound = Inbound.over(reader, LspFramer(unread=unread, on_foreign_start=on_foreign_start))
    return Connection(inbound, MessageWriter(writer), dialect=LSP)


def line_connection(reader: Input, writer: StreamWriter, dialect: Dialect = ACP) -> Connection:
    """A connection speaking newline-delimited JSON-RPC (ACP, MCP) on `reader`, `writer`."""
    inbound = Inbound.over(reader, LineFramer())
    return Connection(inbound, MessageWriter(writer, line_frame), dialect=dialect)


async def serve_then_close(
    conn: Connection, writer: StreamWriter, cleanup: Callable[[], None]
) -> None:
    """Serve until end of input (or `conn.stop()`), then `cleanup()` and close the output —
    also when cancelled, so the peer sees the end of our output."""
    try:
        await conn.serve()
    finally:
        cleanup()
        conn.writer.flush()
        writer.close()
    with anyio.move_on_after(5, shield=True):
        await writer.wait_closed()
