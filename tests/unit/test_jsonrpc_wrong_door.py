"""`foreign_start` judges an LSP door's input by its start (jsonrpc/wrong_door.py): a hint for
what is surely not LSP, nothing for what is, and no verdict while too little has arrived."""

from __future__ import annotations

import pytest

from askbridge.jsonrpc.framing import LspFramer
from askbridge.jsonrpc.wrong_door import foreign_start


@pytest.mark.parametrize(
    ("start", "ended", "verdict"),
    [
        (b"", False, None),
        (b"\r\n", False, None),
        (b"Content-Len", False, None),
        (b"garbage", False, None),
        (b"Content-Length: 5", False, ""),
        (b"\r\ncontent-type: x", False, ""),
        (b"", True, ""),
        (b"{", False, "newline-delimited JSON"),
        (b'[{"jsonrpc"', False, "newline-delimited JSON"),
        (b"garbage\n", False, "starts with 'garbage', not a Content-Length header"),
        (b"garbage", True, "starts with 'garbage'"),
        (b": x", False, "starts with ': x'"),
        (b"two words:", False, "starts with 'two words:'"),
        (b"x" * 300, False, "starts with '" + "x" * 40 + "'"),
    ],
)
def test_the_start_of_the_input_says_whether_it_is_lsp(
    start: bytes, ended: bool, verdict: str | None
) -> None:
    hint = foreign_start(start, ended)
    if verdict is None or verdict == "":
        assert hint == verdict
    else:
        assert hint is not None and verdict in hint
        assert hint.endswith("an ACP client wants `askbridge acp`, an MCP client `askbridge mcp`")


def test_the_framer_says_it_once_and_reads_on_to_the_next_header() -> None:
    heard: list[str] = []
    framer = LspFramer(on_foreign_start=heard.append)
    framer.feed(b'{"jsonrpc":"2.0"}\n')
    assert framer.take() is None and len(heard) == 1
    framer.feed(b'Content-Length: 2\r\n\r\n{}{"again":1}\n')
    frames = [framer.take(), framer.take()]
    assert frames[0] is not None and frames[0].problem is not None  # S8: refused, then resync
    assert frames[1] is not None and frames[1].body == b"{}"
    assert len(heard) == 1
