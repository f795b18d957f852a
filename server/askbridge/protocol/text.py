"""Text that cannot be stored (S3): lone UTF-16 surrogates.

`json.loads` turns a `\\ud800` escape without its partner into a Python string
that SQLite (and UTF-8) cannot encode; a valid pair is joined into one code
point by the parser, so every surrogate left in a decoded string is lone.
Client input holding one is refused naming the field (`lone_surrogate_path`);
model output and peers' error messages are kept with U+FFFD instead (`scrub`).
"""

from __future__ import annotations

import json
import re
from typing import Any

# The compact JSON of what we write, frames (jsonrpc/encoding.py) and stored events
# (store_api.encode_event) alike: UTF-8 kept, NaN refused. Built once, since json.dumps
# with any option set builds a new JSONEncoder on every call.
COMPACT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")

LONE_SURROGATE_MESSAGE = "holds a lone surrogate, which is not text"


def has_lone_surrogate(text: str) -> bool:
    return _LONE_SURROGATE.search(text) is not None


def lone_surrogate_path(value: Any, path: str = "") -> str | None:
    """The dotted path of the first key or string holding a lone surrogate, else None.

    A string at the top level has the path "" (the caller names it).
    """
    if isinstance(value, str):
        return path if _LONE_SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            where = f"{path}.{key}" if path else str(key)
            if _LONE_SURROGATE.search(key):
                return where
            found = lone_surrogate_path(item, where)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = lone_surrogate_path(item, f"{path}.{index}" if path else str(index))
            if found is not None:
                return found
    return None


def scrub(value: Any) -> Any:
    """`value` with every lone surrogate replaced by U+FFFD (S3); the same object if clean."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value) if _LONE_SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(item) for item in value]
    return value
