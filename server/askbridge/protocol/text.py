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
import re
from collections.abc import Callable
from typing import Any

from askbridge.process.ctrl_c import CtrlCHeld

# orjson's module initialisation is not safe against a KeyboardInterrupt raised inside it:
# Ctrl-C there ended `askbridge acp --host inline` with SIGSEGV (1 in 60-120 Ctrl-Cs sent in
# its first 0.4 s; faulthandler showed `import orjson`). So Ctrl-C is held while it
# imports, and raised right after, where the callers turn it into status 130.
_ctrl_c = CtrlCHeld()
with _ctrl_c:
    import orjson
if _ctrl_c.pressed:
    raise KeyboardInterrupt

# orjson encodes a dataclass and a datetime; json refuses them, and so do we. (A UUID or an
# Enum it writes as its value, where json would refuse it: none of our values holds one.)
_REFUSE_MORE = orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME


def compact_encoder(*, allow_nan: bool) -> Callable[[Any], str]:
    """`json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=…)`: key
    order kept, anything but JSON's types refused (TypeError), and NaN and Infinity too
    (ValueError) unless `allow_nan`; a lone surrogate kept (UTF-8 cannot hold it: a
    store refuses it, a frame escapes it).

    orjson makes the text: the json module's encoder costs several times as much per
    event (its fast path, a C encoder built once, is private). Where orjson's text
    would differ from `json.dumps`', json makes it: for a lone surrogate, a key that
    is not a string, an integer past 64 bits or nesting past 254 levels (orjson refuses
    those), and for a value orjson wrote with a `null` that does not read back as the
    value (a NaN or an Infinity, which orjson writes as null; a tuple). A float in
    exponent form is spelled orjson's way (`1e16` where json says `1e+16`): the same
    number to every JSON reader."""
    standard = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)

    def encode(value: Any) -> str:
        try:
            data = orjson.dumps(value, option=_REFUSE_MORE)
        except TypeError:
            return standard.encode(value)
        # `find`, not `in`: `in` first tries its operand as an integer, and builds and
        # drops a TypeError on every call.
        if data.find(b"null") != -1 and orjson.loads(data) != value:
            return standard.encode(value)
        return data.decode()

    return encode


# The compact JSON of what we write, frames (jsonrpc/encoding.py) and stored events
# (store_api.encode_event) alike: UTF-8 kept, NaN refused.
compact_json = compact_encoder(allow_nan=False)
_STANDARD = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def compact_bytes(value: Any) -> bytes:
    """`compact_json(value).encode()`, without the round trip through text (a frame's);
    UnicodeEncodeError for a lone surrogate."""
    try:
        data = orjson.dumps(value, option=_REFUSE_MORE)
    except TypeError:
        return _STANDARD.encode(value).encode()
    if data.find(b"null") != -1 and orjson.loads(data) != value:
        return _STANDARD.encode(value).encode()
    return data


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
