"""A JSON object with its compact text, encoded once where it is built (the encode-once step).

A question's arguments reach JSON text four times: the `assistant/message` and
`tool/call` events the store writes, the `tool_call` update every follower
gets, the card. Each time the same dict was encoded again, and the C encoder
pays per key and per string far more than splicing text does (a 300-byte event
cost ~34k instructions, its text spliced from its parts ~3k). So where such a
value is built it can be an `EncodedObject`: the dict itself (every reader
reads it as the dict it is), holding `json`, its compact text
(`protocol/text.compact_json`: UTF-8 kept, key order kept, NaN refused). A
builder that knows its parts' texts makes one from a constant-key template
(`text_of` gives a part's text), and an encoder that is handed one as a whole
takes its text (`text_of`, the store's `encode_event`, jsonrpc's `encode`).

It lives in `protocol` because every layer that encodes meets it: the log's
event constructors build them, the store writes their text (and may not import
`jsonrpc`), the doors splice them into frames.

The invariant `obj.json == compact_json(obj)` holds because the object is
read-only (its mutators raise TypeError; `dict(obj)` is a plain copy, and so is
what `copy` makes), and an encoder that does not look for one (the C encoder,
meeting one nested in another value) encodes it as the dict it is, which gives
the same text: an `EncodedObject` only ever saves work, never changes a byte.
The builders' templates are checked against `compact_json` in
tests/unit/test_encoded.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from json.encoder import encode_basestring
from typing import Any, NoReturn

from .text import compact_json

# The string encoder compact_json's C encoder calls for every string (ensure_ascii off).
json_string = encode_basestring


class EncodedObject(dict[str, Any]):
    """A read-only dict and `json`, its compact JSON text (module docstring)."""

    __slots__ = ("json",)  # set by `with_text` or `encoded`, the only ways to make one

    json: str

    def _read_only(self, *_args: Any, **_kwargs: Any) -> NoReturn:
        raise TypeError("an EncodedObject is read-only (its text is kept): copy it with dict()")

    __setitem__ = __delitem__ = _read_only
    clear = pop = popitem = setdefault = update = _read_only
    __ior__ = _read_only

    def __reduce__(self) -> tuple[type[dict[str, Any]], tuple[dict[str, Any]]]:
        return dict, (dict(self),)  # copies and pickles are plain dicts


def with_text(value: Mapping[str, Any], json: str) -> EncodedObject:
    """A copy of `value` holding `json`, which must be `compact_json(value)`: only a builder
    whose template is tested against it passes its own; anyone else uses `encoded`. (The
    dict's own constructor and a slot set: a Python `__init__` would cost a third more.)"""
    obj = EncodedObject(value)
    obj.json = json
    return obj


def encoded(value: Mapping[str, Any]) -> EncodedObject:
    """`value` as an EncodedObject (encoded now, unless it is one); the encoder's TypeError,
    ValueError or RecursionError for a value that is not plain JSON."""
    if type(value) is EncodedObject:
        return value
    return with_text(value, compact_json(value))


def text_of(value: Any) -> str:
    """`compact_json(value)`, taking an EncodedObject's text and encoding a string directly
    (the template builders' parts)."""
    kind = type(value)
    if kind is str:
        return json_string(value)
    if kind is EncodedObject:
        text: str = value.json
        return text
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    return compact_json(value)
