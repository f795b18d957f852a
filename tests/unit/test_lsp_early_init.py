"""Lifecycle: the early `initialize` answer of `askbridge serve` (bridge/early.py), over real pipes.

A plain first `initialize` is answered before the heavy imports; anything else
is handed back byte for byte to the regular reader, without waiting for input
the regular reader would not wait for. The end-to-end answer is checked in
tests/e2e/test_lifecycle.py; here each branch is driven directly.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from askbridge import __version__
from askbridge.lsp.early import INITIALIZE_RESULT, EarlyStart, answer_initialize_early
from askbridge.protocol.session import SERVER_NAME, server_experimental_capabilities

pytestmark = pytest.mark.timeout(20)  # a branch that waited for input it should not would hang


def frame(body: bytes, header: bytes = b"Content-Length") -> bytes:
    return header + b": %d\r\n\r\n" % len(body) + body


def request(method: str, params: object = None, msg_id: object = 1) -> bytes:
    msg: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


INITIALIZE = request("initialize", {"capabilities": {}})
LATER = frame(request("session/list", {}, 2))
# An initialize that `json.loads` cannot decode (RecursionError): -32700 the regular way (S3).
TOO_DEEP = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":%b}}' % (
    b"[" * 10_000 + b"]" * 10_000  # fits a pipe: run() writes before it reads
)


class Pipes:
    """Two real pipes: the server's stdin (in_r ← in_w) and stdout (out_w → out_r)."""

    def __init__(self) -> None:
        self.in_r, self.in_w = os.pipe()
        self.out_r, self.out_w = os.pipe()
        self._open = {self.in_r, self.in_w, self.out_r, self.out_w}

    def close(self, fd: int) -> None:
        if fd in self._open:  # once only: a closed number may already be someone else's fd
            self._open.discard(fd)
            os.close(fd)

    def answered(self) -> bytes:
        """Everything the early path wrote (its write end is closed first)."""
        self.close(self.out_w)
        data = b""
        while chunk := os.read(self.out_r, 65536):
            data += chunk
        return data

    def close_all(self) -> None:
        for fd in list(self._open):
            self.close(fd)


@contextmanager
def pipes() -> Iterator[Pipes]:
    p = Pipes()
    try:
        yield p
    finally:
        p.close_all()


def run(sent: bytes) -> tuple[EarlyStart, bytes]:
    """Send `sent` (the client keeps its end open), run the early path, return what it did."""
    with pipes() as p:
        os.write(p.in_w, sent)
        early = answer_initialize_early(p.in_r, p.out_w)
        return early, p.answered()


def test_lifecycle_plain_initialize_is_answered_and_the_rest_handed_on() -> None:
    """Lifecycle: the early reply is the regular initialize result, framed as FrameWriter does."""
    early, written = run(frame(INITIALIZE) + LATER)
    reply = {"jsonrpc": "2.0", "id": 1, "result": INITIALIZE_RESULT}
    body = json.dumps(reply, separators=(",", ":")).encode()
    assert written == frame(body)
    assert early == EarlyStart(unread=LATER, initialize={"capabilities": {}})


def test_lifecycle_early_result_is_the_protocol_initialize_result() -> None:
    """Lifecycle: capabilities.experimental and serverInfo equal the wire models' values."""
    assert INITIALIZE_RESULT == {
        "capabilities": {"experimental": server_experimental_capabilities()},
        "serverInfo": {"name": SERVER_NAME, "version": __version__},
    }


def test_lifecycle_body_arriving_after_the_header_is_waited_for() -> None:
    """Lifecycle: a whole, valid header (some clients write it separately) waits for its body."""
    with pipes() as p:
        whole = frame(INITIALIZE)
        split = whole.index(b"\r\n\r\n") + 4 + 5
        os.write(p.in_w, whole[:split])

        def rest() -> None:
            time.sleep(0.05)  # after the first read has taken the header
            os.write(p.in_w, whole[split:] + LATER)

        writer = threading.Thread(target=rest)
        writer.start()
        early = answer_initialize_early(p.in_r, p.out_w)
        writer.join()
        assert b'"result"' in p.answered()
    assert early.initialize == {"capabilities": {}}
    assert early.unread == LATER


@pytest.mark.parametrize(
    "sent",
    [
        frame(request("initialize", {"initializationOptions": {"model": {"kind": "x"}}})),
        frame(request("session/list", {})),
        frame(request("initialize", [])),
        frame(request("initialize", {}, msg_id=True)),
        frame(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"'),
        frame(b'"\xff\xfe"'),
        frame(INITIALIZE, header=b"Content-Lenght"),
        b"Content-Length: 99999999999\r\n\r\n{}",
        b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
        b"garbage\n\n" + frame(INITIALIZE),
        b"\r\n" + frame(INITIALIZE),
        b"Content-Length: 10",
        frame(TOO_DEEP),
        frame(request("initialize", {}, msg_id="a\ud800")),
        frame(INITIALIZE + b" {}"),
        frame(b"\xef\xbb\xbf" + INITIALIZE),
        frame(INITIALIZE, header=b"Content Length"),
    ],
    ids=[
        "options-to-validate",
        "not-initialize",
        "list-params",
        "bool-id",
        "truncated-json",
        "not-utf8",
        "no-content-length",
        "oversized",
        "two-lengths",
        "bare-lf-garbage",
        "leading-blank-line",
        "partial-header",
        "too-deep-to-decode",
        "lone-surrogate-id",
        "extra-data",
        "utf8-bom",
        "space-in-header-name",
    ],
)
def test_lifecycle_anything_else_is_handed_back_unanswered(sent: bytes) -> None:
    """Lifecycle/Errors: no early reply, every byte goes to the regular reader, and the early
    path returns without waiting for more input (the client's end stays open)."""
    early, written = run(sent)
    assert written == b""
    assert early == EarlyStart(unread=sent)


def test_lifecycle_the_too_deep_case_is_one_json_cannot_decode() -> None:
    with pytest.raises(RecursionError):
        json.loads(TOO_DEEP)


def test_lifecycle_a_body_json_reads_is_read_alike() -> None:
    """Lifecycle: JSON whitespace around the body, escapes and a header's optional spaces:
    read as `json.loads` reads them (lsp/early.py keeps to `_json`), answered early."""
    body = b' \r\n\t{"jsonrpc": "2.0", "method": "initialize", "id": "\\u00e9", "params":'
    body += (
        b' {"clientInfo": {"name": "\\ud83d\\ude00 caf\xc3\xa9", "n": [1.5e3, -0, true, null]}}}\n '
    )
    early, written = run(b"Content-Length:\t%d \r\n\r\n" % len(body) + body + LATER)
    assert early == EarlyStart(unread=LATER, initialize=json.loads(body)["params"])
    header, _, reply = written.partition(b"\r\n\r\n")
    expected = {"jsonrpc": "2.0", "id": "\u00e9", "result": INITIALIZE_RESULT}
    assert reply == json.dumps(expected, separators=(",", ":"), ensure_ascii=False).encode()
    assert header == b"Content-Length: %d" % len(reply)


def test_lifecycle_end_of_input_hands_on_nothing() -> None:
    """Lifecycle: input that ends at once (and a body cut short) goes the regular way."""
    for sent in (b"", frame(INITIALIZE)[:-3]):
        with pipes() as p:
            os.write(p.in_w, sent)
            p.close(p.in_w)
            early = answer_initialize_early(p.in_r, p.out_w)
            assert p.answered() == b""
        assert early == EarlyStart(unread=sent)
