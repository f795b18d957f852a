"""Text that cannot be stored (S3): lone UTF-16 surrogates; text that hides itself (S17).

`json.loads` turns a `\\ud800` escape without its partner into a Python string
that SQLite (and UTF-8) cannot encode; a valid pair is joined into one code
point by the parser, so every surrogate left in a decoded string is lone.
Client input holding one is refused naming the field (`lone_surrogate_path`);
model output and peers' error messages are kept with U+FFFD instead (`scrub`).

Where the user decides on what a card shows (approval, plan review), a character
that changes how the text around it reads without showing itself is spelled out
(`visible`): `<U+202E>` for a right-to-left override, and so on.
"""

from __future__ import annotations

import json
import json.encoder
import re
from collections.abc import Callable
from typing import Any


def compact_encoder(*, allow_nan: bool) -> Callable[[Any], str]:
    """`json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=…).encode`,
    without its per-call cost: `encode` builds a new C encoder on every call (a quarter of
    encoding an event). This one is built once. It keeps no circular-reference markers
    (those are per call, so a shared one could not be kept between threads): a value that
    contains itself raises RecursionError, as one nested too deep already does."""
    make = getattr(json.encoder, "c_make_encoder", None)
    reference = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)
    if make is None:  # no C accelerator (another interpreter): the standard encoder
        return reference.encode
    strings = json.encoder.encode_basestring
    encode_once = make(None, reference.default, strings, None, ":", ",", False, False, allow_nan)

    def encode(value: Any) -> str:
        return "".join(encode_once(value, 0))

    return encode


# The compact JSON of what we write, frames (jsonrpc/encoding.py) and stored events
# (store_api.encode_event) alike: UTF-8 kept, NaN refused.
compact_json = compact_encoder(allow_nan=False)

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


# Bidi embeddings, overrides, isolates and marks; zero-width spaces and joiners, the word
# joiner and the invisible operators; the BOM; fillers that render as nothing; Unicode
# tags; and the ASCII and 0x80-0x9f controls but newline and tab. Variation selectors are
# left alone: they only pick a glyph's style.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5"
    "\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb"
    "\U000e0000-\U000e007f]"
)


def visible(text: str) -> str:
    """`text` with every character that hides itself or reorders its neighbours shown
    as `<U+XXXX>`, so what a person approves reads as what it is (S17)."""
    if _INVISIBLE.search(text) is None:
        return text
    return _INVISIBLE.sub(lambda match: f"<U+{ord(match.group()):04X}>", text)
