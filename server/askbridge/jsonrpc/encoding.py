"""JSON out: the one encoding of what we send, and a message for several peers encoded once.

`encode(obj)` is compact UTF-8 JSON, NaN refused — every message the writer
queues. A question shown in ten windows, an update told to ten followers, is
the same params value ten times; only a request's `id` differs per peer. So a
door may hand the connection `Encoded(params)` — the value encoded once — as
a message's params: `frame_message` splices those bytes into each message
(`{"jsonrpc":"2.0","method":…,"id":…,"params":<the bytes>}`), byte for byte
what encoding the whole message would give; a notification's frame is built
once for all.

A value built with its text (`protocol.encoded.EncodedObject`: a question's
arguments, the events and updates that carry them) is not encoded again: `encode`
takes its text, and a door that splices params from such texts hands over
`Encoded.of_text(text)`.

`OncePerTurn` is how a door shares one `Encoded` between its connections
without the host knowing about encodings: the host hands every window the
same object (the fan-out the same `UserQuestionRequest` to each card, the
publisher the same update dicts to each follower) in one synchronous pass, so
the door keys its params by that object's identity, for the rest of the
event-loop turn (or of the group commit's batch, flushing.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from askbridge.protocol.encoded import EncodedObject
from askbridge.protocol.text import compact_bytes

from .flushing import flushes_of

T = TypeVar("T")
Tag = TypeVar("Tag")


# Built once: json.dumps with options builds a JSONEncoder per call. Only for a lone surrogate.
_COMPACT_ASCII = json.JSONEncoder(separators=(",", ":"), allow_nan=False)


def encode(obj: Any) -> bytes:
    """Compact UTF-8 JSON; NaN refused (ValueError), non-JSON types refused (TypeError)."""
    try:
        # A value built with its text (protocol/encoded.py) is not encoded again.
        if type(obj) is EncodedObject:
            return obj.json.encode()
        return compact_bytes(obj)
    except UnicodeEncodeError:
        # A lone surrogate slipped through: escaped, the JSON stays valid and readable.
        return _COMPACT_ASCII.encode(obj).encode()


Framer = Callable[[bytes], bytes]


class Encoded:
    """A message's params, encoded once (`encode`) for every peer it goes to; a notification
    carrying them is framed once per framing too (its bytes are the same for every peer)."""

    __slots__ = ("_frames", "json")

    def __init__(self, value: Any) -> None:
        self.json = encode(value)
        self._frames: dict[tuple[str, Framer], bytes] = {}

    @classmethod
    def of_text(cls, text: str) -> Encoded:
        """Params whose compact text (`compact_json`'s) the caller spliced from its parts
        (protocol/encoded.py), without building the value first."""
        encoded = cls.__new__(cls)
        try:
            encoded.json = text.encode()
        except UnicodeEncodeError:  # a lone surrogate: escaped, as `encode` escapes it
            encoded.json = encode(json.loads(text))
        encoded._frames = {}
        return encoded

    def notification(self, method: str, frame: Framer) -> bytes:
        framed = self._frames.get((method, frame))
        if framed is None:
            framed = self._frames[method, frame] = frame(
                b'%b,"params":%b}' % (_head(method), self.json)
            )
        return framed


@functools.lru_cache(maxsize=64)  # a door sends a handful of methods
def _head(method: str) -> bytes:
    return encode({"jsonrpc": "2.0", "method": method})[:-1]  # without its closing brace


def frame_message(msg: Any, frame: Framer) -> bytes:
    """`frame(encode(msg))`; a message whose params are `Encoded` (the shape `messages.call`
    builds: jsonrpc, method, id if a request, params last) gets those bytes spliced in."""
    params = msg.get("params") if type(msg) is dict else None
    if type(params) is not Encoded:
        return frame(encode(msg))
    request = "id" in msg
    assert len(msg) == 3 + request and next(reversed(msg)) == "params", msg  # O(1): a hot path
    if not request:
        return params.notification(msg["method"], frame)
    head, msg_id = _head(msg["method"]), encode(msg["id"])
    return frame(b'%b,"id":%b,"params":%b}' % (head, msg_id, params.json))


class OncePerTurn:
    """`get(obj, tag, build)`: `Encoded(build(obj, tag))`, built once per event-loop turn for
    the same object `obj` and `tag` — for a door's connections that are all handed `obj`
    in one synchronous pass. Each entry holds its `obj`, so no other object can take its
    identity while it is kept; every entry is dropped at the loop's next turn, so an
    object changed later is encoded anew."""

    __slots__ = ("_entries", "_loop")

    def __init__(self) -> None:
        self._entries: dict[tuple[int, object], tuple[object, Encoded]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self, obj: T, tag: Tag, build: Callable[[T, Tag], Any]) -> Encoded:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # the first in this turn (or on this loop)
            self._entries.clear()
            self._loop = loop
            # With the writers' flush (flushing.py): one callback for both, and within a
            # group commit's batch none, the batch's end being the turn's.
            flushes_of(loop).at_turn_end(self._end_turn)
        key = (id(obj), tag)
        entry = self._entries.get(key)
        if entry is not None:
            return entry[1]
        built = build(obj, tag)  # the params, or their Encoded (`Encoded.of_text`)
        encoded = built if type(built) is Encoded else Encoded(built)
        self._entries[key] = (obj, encoded)
        return encoded

    def _end_turn(self) -> None:
        self._entries.clear()
        self._loop = None
