"""A session's rows as events: the columns a row keeps beside its body, and decoding the
bodies all at once (`decode`, for `load`) or only as far as a fold reads (`decode_lazily`).

Why lazily: loading a session folds its whole log (the projection, the inbox, the
calls without a result: host/agent/session.py), and decoding every body costs more
than the folds themselves. Of most events the folds read only `type`, `callId` and
`name`, which a row keeps beside its body: the `type` column, and its `head`, the
JSON array `[type, callId, name]`, both taken off the body's leading keys when the
row is written (`columns`; the constructors of host/log/events.py put those keys
first, and `encode_event` never repeats a key). They are exact: a key whose value
is not a plain string (escapes included) is null, so the columns never say anything
the body does not, and a body that does not start with its type has none (it is
then always decoded).

`decode_lazily` reads, per row, the body or (for LAZY_TYPES) only the head
(`LAZY_SELECT`), and gives those events as `LazyEvent`s holding the head's keys;
reading any other key, or the event as a whole (iteration, `len`, `==`, a copy, a
change), reads and decodes its body first (one query), and from then on it is the
plain stored event. So a fold sees exactly the events `load` returns whatever it
reads; which types are kept lazy only decides what it costs. A LazyEvent is for
folding while the store is open: code that hands events on, to C readers that look
into a dict directly (pydantic, for one) or past the store's close, takes them from
`load`, which decodes everything.

Damage (S6): a body that is not one JSON object is StoreDamaged naming the event,
at once for a decoded event and on first read for a lazy one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from ..log import events as ev
from ..log.events import Event
from ..log.gcpause import paused_gc
from .store_api import StoreDamaged

Columns = tuple[str | None, str | None]  # a row's `type` and `head`
BadEvent = Callable[[int], StoreDamaged]  # "event <i> is not a JSON object", naming the session
ReadEvent = Callable[[int], Event]  # event <i> of the session, read and decoded alone

# The leading keys of a compact body (encode_event), each value a string without a quote,
# a backslash or a control character: exactly the string the body holds.
_LEADING_KEYS = re.compile(
    r'\{"type":"([^"\\\x00-\x1f]*)"'
    r'(?:,"callId":"([^"\\\x00-\x1f]*)")?(?:,"name":"([^"\\\x00-\x1f]*)")?'
)
_NONE: Columns = (None, None)

# The events whose bodies a load's folds do not read: a call (its id and name are in its
# head; the projection reads its arguments only for an ask it tracks), a user message (read
# only while an ask is active), a turn's end (its type is all), an assistant message (the
# session reads the text of the latest with text only). The others are small or read
# whole: the header, turn/start (its id), request/header (its tools), the inbox's events,
# and tool/result, which the projection hands whole to readers that take only a plain
# `dict` (`type(x) is dict`, as parsed JSON always is), so a LazyEvent must not reach them.
LAZY_TYPES = (ev.TOOL_CALL, ev.USER_MESSAGE, ev.TURN_END, ev.ASSISTANT_MESSAGE)
_LAZY = frozenset(LAZY_TYPES)

# Per row: its body, or the head of a LAZY_TYPES event, so that one json.loads reads all.
# A body SQLite's JSON parser does not find to be one object is read whole instead, so a
# damaged body is still reported at load (S6), not when it is first read: json_valid
# parses in C and builds nothing, a fraction of what json.loads costs. (Where SQLite is
# stricter than Python, e.g. NaN, the body is only decoded eagerly, as before.)
LAZY_SELECT = (
    f"CASE WHEN type IN ({', '.join(repr(kind) for kind in LAZY_TYPES)})"
    " AND json_valid(body) AND substr(body, 1, 1) = '{' THEN head ELSE body END"
)


def columns(body: str) -> Columns:
    """A stored body's `type` column and its `head`: the JSON array [type, callId, name]
    of its leading keys (null for one it lacks); both None if it does not start with a
    type. Exact: a column never says anything the body does not."""
    found = _LEADING_KEYS.match(body)
    if found is None:
        return _NONE
    kind, call_id, name = found.groups()
    # Spliced, not json.dumps'd (4x faster on every write): the values need no escaping.
    # Inline, not a helper per value: this runs for every event written.
    call = "null" if call_id is None else f'"{call_id}"'
    named = "null" if name is None else f'"{name}"'
    return kind, f'["{kind}",{call},{named}]'


class LazyEvent(dict[str, Any]):
    """A stored event of which only its row's column keys are decoded (module docstring)."""

    __slots__ = ("_index", "_read")

    _read: ReadEvent | None
    _index: int

    def decode(self) -> None:
        """Become the stored event (StoreDamaged, each time, if the body is not one)."""
        read = self._read
        if read is not None:
            event = read(self._index)
            self._read = None
            dict.clear(self)
            dict.update(self, event)

    def get(self, key: str, default: Any = None) -> Any:
        if self._read is not None and key != "type" and not dict.__contains__(self, key):
            self.decode()  # "type" is never NULL in a lazy row: the folds' first question
        return dict.get(self, key, default)

    def __getitem__(self, key: str) -> Any:
        if self._read is not None and not dict.__contains__(self, key):
            self.decode()
        return dict.__getitem__(self, key)

    def __contains__(self, key: object) -> bool:
        if self._read is not None and not dict.__contains__(self, key):
            self.decode()
        return dict.__contains__(self, key)


def _decoding_first(name: str) -> Callable[..., Any]:
    method = getattr(dict, name)

    def decoded(self: LazyEvent, *args: Any, **kwargs: Any) -> Any:
        self.decode()
        return method(self, *args, **kwargs)

    decoded.__name__ = decoded.__qualname__ = name
    return decoded


# Everything else a dict can do sees the whole event. (`__eq__` also answers for
# `plain == lazy`: Python asks the subclass first.)
for _name in (
    "__iter__ __len__ __reversed__ __repr__ __eq__ __ne__ __or__ __ror__ __ior__ __reduce__"
    " __reduce_ex__ __setitem__ __delitem__ keys values items copy pop popitem setdefault"
    " update clear"
).split():
    setattr(LazyEvent, _name, _decoding_first(_name))


def decode(bodies: Sequence[str], bad_event: BadEvent) -> list[Event]:
    """Every body as its event; StoreDamaged for the first that is not one JSON object."""
    events = _decode_joined(bodies)
    if events is not None and all(type(event) is dict for event in events):
        return events
    # Slow path, only for a damaged file: find and name the bad event.
    raise bad_event(next(i for i, body in enumerate(bodies) if json_object(body) is None))


def decode_lazily(texts: Sequence[str], bad_event: BadEvent, read: ReadEvent) -> list[Event]:
    """The events of a session's LAZY_SELECT texts, those of LAZY_TYPES as LazyEvents
    that `read` their body when it is needed."""
    events = _decode_joined(texts)
    if events is None:
        raise bad_event(next(i for i, text in enumerate(texts) if _json_value(text) is None))
    with paused_gc():  # no cycles among them (gcpause.py)
        for index, item in enumerate(events):
            if type(item) is dict:
                continue
            if type(item) is not list or len(item) != 3 or item[0] not in _LAZY:
                raise bad_event(index)  # a body that is not an object
            kind, call_id, name = item
            if call_id is None:
                event = LazyEvent(type=kind) if name is None else LazyEvent(type=kind, name=name)
            elif name is None:
                event = LazyEvent(type=kind, callId=call_id)
            else:
                event = LazyEvent(type=kind, callId=call_id, name=name)
            event._read, event._index = read, index
            events[index] = event
    return events


def _decode_joined(texts: Sequence[str]) -> list[Any] | None:
    """Each text's JSON value, or None if one of them is not exactly one."""
    # One json.loads over the joined array beats one call per row; the length check
    # catches a text that holds two values. Pausing the cycle collector makes a
    # 100,000-event load 3-4x faster (gcpause.py).
    with paused_gc():
        try:
            decoded = json.loads("[" + ",".join(texts) + "]")
        except (ValueError, TypeError, RecursionError):
            return None
    return decoded if isinstance(decoded, list) and len(decoded) == len(texts) else None


def json_object(body: object) -> Event | None:
    """`body` parsed, if it is the text of one JSON object; else None."""
    event = _json_value(body)
    return event if type(event) is dict else None


def _json_value(text: object) -> Any:
    """`text` parsed, if it is the text of one JSON value; else None."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None
