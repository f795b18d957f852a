"""Answer the client's first `initialize` before `askbridge serve` imports its heavy parts.

Importing asyncio, anyio, pydantic, the wire models and the host takes ~150 ms,
while an editor waits for the `initialize` response to finish starting up. The
response does not depend on any of them unless the client sends
`initializationOptions` (those are validated with pydantic). So `run_serve`
calls `answer_initialize_early()` after the store is open and before those
imports: it reads the first frame from stdin with plain blocking reads and,
when that frame is a well-formed `initialize` request without
`initializationOptions`, writes the response to stdout at once.

Anything else (a different first message, options to validate, a header that
is not plainly `Content-Length: N`, a first read without a whole header,
undecodable JSON, end of input) is left alone: every byte read is handed back
in `EarlyStart.unread` for the regular reader, which parses it first and
answers exactly as it always does. When the response was sent,
`EarlyStart.initialize` holds the params, and the caller runs the regular
`initialize` handler on them (without replying again), so the server's state
is the same as if the regular path had answered.

Only `os`, `json`, `re` and `logging` (the command line has it already) are
imported here; keep it that way.
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from typing import Any

from askbridge import __version__

_MAX_BODY = 8 * 1024 * 1024  # framing.MAX_BODY: larger frames go the regular way
_MAX_HEADER = 64 * 1024
_READ = 64 * 1024
_HEADER_LINE = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+):[ \t]*([^\r\n]*)")

# What BridgeServer.initialize returns when the client sends no initializationOptions;
# tests/e2e/test_lifecycle.py checks the served response against the protocol's words.
INITIALIZE_RESULT: dict[str, Any] = {
    "capabilities": {"experimental": {"userQuestions": {"version": 1}}},
    "serverInfo": {"name": "askbridge", "version": __version__},
}


@dataclass(frozen=True)
class EarlyStart:
    """What happened before the event loop: bytes still to parse, and the answered params."""

    unread: bytes = b""
    initialize: dict[str, Any] | None = None


def answer_initialize_early(in_fd: int = 0, out_fd: int = 1) -> EarlyStart:
    """Read the first frame from `in_fd`; if it is a plain `initialize`, answer it on `out_fd`."""
    data = _read(in_fd)
    header_end = data.find(b"\r\n\r\n")
    length = _content_length(data[:header_end]) if 0 <= header_end <= _MAX_HEADER else None
    if length is None:
        return EarlyStart(data)
    body_start = header_end + 4
    while len(data) - body_start < length:  # a whole, valid header: the body is on its way
        chunk = _read(in_fd)
        if not chunk:
            return EarlyStart(data)
        data += chunk
    body_end = body_start + length
    msg_id, params = _plain_initialize(data[body_start:body_end])
    if params is None:
        return EarlyStart(data)
    reply = {"jsonrpc": "2.0", "id": msg_id, "result": INITIALIZE_RESULT}
    logging.getLogger("askbridge.jsonrpc").debug(
        "← request initialize id=%r (answered early)", msg_id
    )
    try:
        _write_all(out_fd, _frame(reply))
    except OSError:  # the client is gone: the regular path sees that too and ends
        return EarlyStart(data)
    return EarlyStart(data[body_end:], params)


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _READ)
    except OSError:
        return b""


def _content_length(block: bytes) -> int | None:
    """The Content-Length of a plain header block; None for anything unusual."""
    length: int | None = None
    for line in block.split(b"\r\n"):
        match = _HEADER_LINE.fullmatch(line)
        if match is None:
            return None
        name, value = match.groups()
        if name.lower() == b"content-length":
            value = value.strip(b" \t")
            if length is not None or not value.isdigit() or len(value) > 9:
                return None
            length = int(value)
    return length if length is not None and length <= _MAX_BODY else None


def _plain_initialize(body: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(id, params) of an `initialize` request the static result answers, else (None, None)."""
    try:
        msg = json.loads(body)
    except ValueError:
        return None, None
    if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
        return None, None
    msg_id = msg.get("id")
    valid_id = isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))
    params = msg.get("params", {})
    params = {} if params is None else params
    if (
        msg.get("method") != "initialize"
        or not valid_id
        or not isinstance(params, dict)
        or params.get("initializationOptions") is not None
    ):
        return None, None
    return msg_id, params


def _frame(msg: Any) -> bytes:
    """Encoded as FrameWriter encodes (compact, UTF-8)."""
    body = json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
