"""Input that was never meant for the LSP door: said once, at its first line.

A client pointed at `askbridge serve` that speaks another framing (an ACP or
MCP client writes newline-delimited JSON) waits for ever: no header block
ever ends, so no frame is refused either. The start of the input tells it
apart from the first line on: a header line is a token and a colon, so a
first byte of `{` or `[`, a byte no header name holds, or a line end before
any colon, is not LSP. `foreign_start` judges the buffered start of the input;
the door says its hint once (on its client's stderr) and reads on as ever (S8).
"""

from __future__ import annotations

# An HTTP header name's bytes (RFC 9110 `token`), as framing.parse_header_block reads it.
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
_LOOK = 256  # no header name is longer: past it without a colon, it is not one
_SHOWN = 40  # characters of a foreign first line shown in the hint

_DOORS = "an ACP client wants `askbridge acp`, an MCP client `askbridge mcp`"


def wrong_door_hint(what: str) -> str:
    return f"this is the LSP door (JSON-RPC framed by Content-Length headers), {what}; {_DOORS}"


def foreign_start(buf: bytes | bytearray, ended: bool) -> str | None:
    """The hint for an input that does not start as LSP does; "" when it does (or is empty
    at its end); None while too little has arrived to tell."""
    start = bytes(buf[:_LOOK])
    text = start.lstrip(b"\r\n")  # stray line ends before a header are harmless
    if not text:
        return "" if ended or len(start) == _LOOK else None
    if text[:1] in (b"{", b"["):
        return wrong_door_hint("but its input is newline-delimited JSON")
    for i, byte in enumerate(text):
        if byte == ord(":"):
            return "" if i else _not_a_header(text)
        if byte not in _TOKEN:
            return _not_a_header(text)
    return _not_a_header(text) if ended or len(start) == _LOOK else None


def _not_a_header(text: bytes) -> str:
    line = text.split(b"\n", 1)[0].rstrip(b"\r")[:_SHOWN].decode("utf-8", "replace")
    return wrong_door_hint(f"but its input starts with {line!r}, not a Content-Length header")
