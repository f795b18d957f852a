"""Answer the client's first `initialize` before `askbridge serve` imports its heavy parts.

What it buys, measured (`askbridge serve --host inline` on an existing store, from spawn
to the answer written, on a 2-core machine under load): the one LSP framer
(jsonrpc/framing.py, after asyncio, anyio, pydantic, the wire models and the host are
imported) answers after 985 million instructions (callgrind), this module after 60
million; the minimum of 15 runs was 315 ms against 36 ms. An editor waits for the
`initialize` response to finish starting up. The
response does not depend on any of them unless the client sends
`initializationOptions` (those are validated with pydantic). So `serve_inline`
calls `answer_initialize_early()` after the data directory is open (below) and
before those imports: it reads the first frame from stdin with plain blocking
reads and, when that frame is a well-formed `initialize` request without
`initializationOptions`, writes the response to stdout at once.

Anything else (a different first message, options to validate, a header that
is not plainly `Content-Length: N`, a first read without a whole header,
undecodable JSON, end of input) is left alone: every byte read is handed back
in `EarlyStart.unread` for the regular reader, which parses it first and
answers exactly as it always does. When the response was sent,
`EarlyStart.initialize` holds the params, and the caller runs the regular
`initialize` handler on them (without replying again), so the server's state
is the same as if the regular path had answered.

The data directory is opened before this answer, not after it: H3's lock and
`host.sock` are taken, and S5/S6 refuse a directory "at start with one line", before any
reply. So a client never gets an `initialize` result from a server that then
exits 1 for its data directory, and once `initialize` is answered the directory
is held and other front doors can attach (protocol/README.md "Before the first
reply"; tests/e2e/test_entry.py). Opening it later would change both. What runs
before the answer is only the holding and the checks, on few modules
(host/store/datadir.py `open_checked`: `os`, `fcntl`, `hashlib`, `sqlite3` and hostsock.py's
socket; hostsock.py `bind_raw_host_socket`); the store object and its modules (`pathlib`,
`dataclasses`, `json`, `typing`, ~30 ms of CPU) come after it
(tests/e2e/test_start_imports.py). Only a directory's first start, or one on an older
schema, imports the migrations (and `json`, `datetime`, `secrets`) before the answer:
its store must exist, its schema current and its identity written (S6) before anything
is answered on it, as on every other start.

Only `os`, `sys` and hostsock.py's JSON (on the C module, as that module says why)
are imported here: not `json`, `re`, `logging`, `dataclasses` or `typing`. The reply
is encoded exactly as `json.dumps(…, separators=(",", ":"), ensure_ascii=False,
allow_nan=False)`, as FrameWriter encodes; a body is read as `json.loads` reads it, or
not at all (anything but strict UTF-8, too deep to decode, or an `id` UTF-8 cannot
encode goes the regular way, which answers it as an attached host does, S3).
"""

from __future__ import annotations

import os
import sys

from askbridge import __version__
from askbridge.process.hostsock import dumps_text, loads

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

_MAX_BODY = 8 * 1024 * 1024  # framing.MAX_BODY: larger frames go the regular way
_MAX_HEADER = 64 * 1024
_READ = 64 * 1024
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

# What BridgeServer.initialize returns when the client sends no initializationOptions;
# tests/e2e/test_lifecycle.py checks the served response against the protocol's words.
INITIALIZE_RESULT: dict[str, Any] = {
    "capabilities": {"experimental": {"userQuestions": {"version": 1}}},
    "serverInfo": {"name": "askbridge", "version": __version__},
}


class EarlyStart:
    """What happened before the event loop: bytes still to parse, and the answered params."""

    __slots__ = ("initialize", "unread")

    def __init__(self, unread: bytes = b"", initialize: dict[str, Any] | None = None) -> None:
        self.unread = unread
        self.initialize = initialize

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, EarlyStart):
            return NotImplemented
        return (self.unread, self.initialize) == (other.unread, other.initialize)

    def __repr__(self) -> str:
        return f"EarlyStart(unread={self.unread!r}, initialize={self.initialize!r})"


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
    try:
        reply = _frame({"jsonrpc": "2.0", "id": msg_id, "result": INITIALIZE_RESULT})
    except UnicodeEncodeError:  # a lone surrogate in the id: the regular path answers it (S3)
        return EarlyStart(data)
    # Not imported for this line: where nothing imported logging, nothing set a level
    # below WARNING (cli/commands.py does it first; cli/entry.py's plain line sets WARNING
    # only after this answer, daemon/inline.py `after_answer`), and this DEBUG line would be
    # dropped.
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger("askbridge.jsonrpc").debug(
            "← request initialize id=%r (answered early)", msg_id
        )
    try:
        _write_all(out_fd, reply)
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
        name, colon, value = line.partition(b":")  # a token, `:`, a value on one line
        if not colon or not name or not _TOKEN.issuperset(name) or b"\r" in value or b"\n" in value:
            return None
        if name.lower() == b"content-length":
            value = value.strip(b" \t")
            if length is not None or not value.isdigit() or len(value) > 9:
                return None
            length = int(value)
    return length if length is not None and length <= _MAX_BODY else None


def _plain_initialize(body: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(id, params) of an `initialize` request the static result answers, else (None, None)."""
    msg = _loads(body)
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


def _loads(body: bytes) -> Any:
    """`json.loads(body)` of a strict UTF-8 body; None when it is anything else."""
    try:
        return loads(body)
    except (ValueError, RecursionError):  # not JSON, or too deep to decode
        return None


def _frame(msg: dict[str, Any]) -> bytes:
    """Encoded as FrameWriter encodes (compact, UTF-8); UnicodeEncodeError for a lone surrogate."""
    body = dumps_text(msg).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
