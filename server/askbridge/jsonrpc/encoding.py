"""JSON out: the one encoding of what we send.

`encode(obj)` is compact UTF-8 JSON, NaN refused (protocol/text.py's
`compact_bytes`) — every message the writer queues. A lone surrogate that
slipped through is escaped, so the frame stays valid JSON.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from askbridge.protocol.text import compact_bytes

# Only for a lone surrogate: escaped, the JSON stays valid and readable.
_COMPACT_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON; NaN refused (ValueError), non-JSON types refused (TypeError)."""
    try:
        return compact_bytes(obj)
    except UnicodeEncodeError:
        return _COMPACT_ASCII.encode(obj).encode()


Framer = Callable[[bytes], bytes]


def frame_message(msg: Any, frame: Framer) -> bytes:
    """`msg` encoded and framed (`lsp_frame`, `line_frame`)."""
    return frame(encode(msg))
