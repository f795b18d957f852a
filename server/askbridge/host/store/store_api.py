"""The interface every event store keeps (SQLite on disk, or in memory for unit tests).

Every method but `check_not_lost` is a coroutine: a store whose commit crosses a
network (PostgreSQL: ~0.7 ms on loopback) awaits it without stalling the loop and
every door with it (M7). A store whose commit is cheap may do it inline, without
awaiting anything (SQLite and memory: store_sqlite.py gives the figure); callers
must work either way. The host never runs two appends at once: its group commit
(commits.py) keeps one commit in flight and fills the next batch meanwhile.

Durability contract (behavior.md D1/D2): when `append` returns, its events are
committed in one transaction — all of them or none survive `kill -9`. Callers
group consecutive events into one `append` to share a commit. An append that is
cancelled while it awaits has an unknown outcome; the host never cancels one.

Rules both stores share (so the in-memory store behaves like the disk one):
events are stored as compact UTF-8 JSON text (`encode_event`), so an event that
cannot be stored (a set, NaN, an object, a lone surrogate, absurd nesting) is
refused with one StoreError (STORE_ERROR) naming the key that holds it, before
anything is written (S3, S4); `load` always returns fresh dicts. A session's
row is derived from its header (`session_info_from_header`).

Unknown versus damaged (S6): `exists(id)` is true for every session the store
knows of, readable or not. `load` of a session that does not exist raises
KeyError (the host turns that into UNKNOWN_SESSION); `load` of one that exists
but whose events cannot be read raises StoreDamaged (STORE_DAMAGED) naming the
session and the file: damage is never mistaken for "no such session" or for an
empty log. Appending to an unknown session raises KeyError; creating an
existing one raises ValueError (both are caller bugs); any call after `close`
raises StoreError.

Every other failure is a StoreError subclass, never a bare OSError or sqlite3
error: STORE_ERROR for a write that failed (the batch is rolled back whole and
the store stays usable, S4), STORE_LOST once the data directory was deleted or
replaced (every later write too, S5), STORE_DAMAGED for unreadable data (S6).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from askbridge.core.errors import StoreDamaged, StoreError, StoreLost
from askbridge.protocol.text import compact_bytes

from ..log.events import SESSION_HEADER, Event

# The store's failures are HarnessErrors (core.errors), so a failed write reaches a
# client as -32000 {name: "StoreError", code: STORE_ERROR | STORE_LOST | STORE_DAMAGED}.
__all__ = [
    "EventStore",
    "SessionInfo",
    "StoreDamaged",
    "StoreError",
    "StoreLost",
    "encode_event",
    "session_info_from_header",
    "session_infos_of",
]


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    created_at: str
    origin: str
    title: str | None = None
    parent_session_id: str | None = None


def session_infos_of(rows: Iterable[Sequence[Any]]) -> list[SessionInfo]:
    """Session rows read as (id, created_at, origin, title, parent_session_id), the
    order both stores select them in."""
    return [
        SessionInfo(
            session_id=session_id,
            created_at=created_at,
            origin=origin,
            title=title,
            parent_session_id=parent,
        )
        for session_id, created_at, origin, title, parent in rows
    ]


class EventStore(Protocol):
    async def create_session(self, header: Event) -> None:
        """Start a session whose first event is `header` (a session/header event),
        committed when this returns."""
        ...

    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        """Append and commit `events` in one transaction."""
        ...

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Append the events of several sessions, each given as its `encode_event` text,
        and commit them all in one transaction (group commit)."""
        ...

    async def load(self, session_id: str) -> list[Event]:
        """Every event of the session, in order; KeyError when there is no such session,
        StoreDamaged when it exists but cannot be read."""
        ...

    async def load_lazily(self, session_id: str) -> list[Event]:
        """`load` for a fold of the whole log (a session's load): the same events, but
        the store may leave a body undecoded until a key beyond `type`, `callId` and
        `name` is read (store/event_rows.py), and a damaged one is StoreDamaged then.
        Reading such a body must not await (SQLite reads it inline); a store that cannot
        returns `load`'s events. Hand these only to code that reads events as dicts
        through their methods."""
        ...

    async def exists(self, session_id: str) -> bool:
        """True for every session the store knows of, also one whose events are damaged."""
        ...

    async def list_sessions(self) -> list[SessionInfo]:
        """Every session, oldest first."""
        ...

    def check_not_lost(self) -> None:
        """StoreLost when writes have stopped for good (S5: the data directory was deleted or
        replaced). Every write checks this itself; this is for a host that wants to notice
        while idle (one `lstat`), so it is a plain call that never waits."""
        ...

    async def close(self) -> None: ...


def encode_event(event: Event) -> str:
    """The stored text of an event: compact JSON, non-ASCII kept; StoreError when it has none."""
    try:
        # UnicodeEncodeError on a lone surrogate, which UTF-8 cannot hold
        text = compact_bytes(event).decode()
    except (TypeError, ValueError, RecursionError) as exc:
        # Only now, on the failure path, walk the event to say where the bad value is.
        where = _unstorable_part(event) or f"it is not plain JSON ({type(exc).__name__})"
        kind = _printable(event.get("type")) if isinstance(event, dict) else "?"
        raise StoreError(f"cannot store a {kind} event: {where}") from exc
    return text


# Deeper than this the JSON encoder may run out of stack; the walk below stops there too.
_MAX_DEPTH = sys.getrecursionlimit() // 2
_PATH_LEVELS = 8


def _unstorable_part(event: object) -> str | None:
    """`arguments.questions[0].question holds a lone surrogate (U+D800)`, or None.

    Iterative, so a value nested too deep for the encoder cannot break the walk.
    """
    stack: list[tuple[str, object, int]] = [("", event, 0)]
    while stack:
        path, value, depth = stack.pop()
        where = path or "the event"
        if depth > _MAX_DEPTH:
            return f"{where} nests deeper than {_MAX_DEPTH} levels"
        if isinstance(value, str):
            problem = _string_problem(value)
            if problem:
                return f"{where} holds {problem}"
        elif isinstance(value, float):
            if not math.isfinite(value):
                return f"{where} holds {value!r}, which JSON cannot hold"
        elif isinstance(value, dict):
            children: list[tuple[str, object, int]] = []
            for key, item in value.items():
                if not _storable_key(key):
                    return f"{where} has the key '{_printable(key)}', which JSON cannot hold"
                name = _printable(key)
                children.append(
                    (_extend(path, f".{name}" if path else name, depth), item, depth + 1)
                )
            stack.extend(reversed(children))  # report the first bad key in event order
        elif isinstance(value, (list, tuple)):
            stack.extend(
                (_extend(path, f"[{i}]", depth), value[i], depth + 1)
                for i in reversed(range(len(value)))
            )
        elif value is not None and not isinstance(value, (bool, int)):
            return f"{where} holds a {type(value).__name__}, which JSON cannot hold"
    return None


def _extend(path: str, part: str, depth: int) -> str:
    """A child's path; past a few levels just `…`, so a message stays one short line."""
    if depth < _PATH_LEVELS:
        return path + part
    return path if depth > _PATH_LEVELS else path + "…"


def _storable_key(key: object) -> bool:
    """What `json.dumps` accepts as a key (it turns numbers, booleans and None into text)."""
    if isinstance(key, str):
        return _string_problem(key) is None
    if isinstance(key, float):
        return math.isfinite(key)
    return key is None or isinstance(key, (bool, int))


def _string_problem(text: str) -> str | None:
    if text.isascii():
        return None
    for char in text:
        if "\ud800" <= char <= "\udfff":
            return f"a lone surrogate (U+{ord(char):04X})"
    return None


def _printable(value: object) -> str:
    """`value` as text that can itself be stored and sent (surrogates escaped)."""
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")


def session_info_from_header(header: Event) -> SessionInfo:
    """The session row a `session/header` event describes; ValueError if it is not one."""
    if header.get("type") != SESSION_HEADER:
        raise ValueError(f"first event of a session must be {SESSION_HEADER!r}")
    fields = {key: header.get(key) for key in ("sessionId", "createdAt", "origin")}
    missing = [key for key, value in fields.items() if not isinstance(value, str) or not value]
    if missing:
        raise ValueError(f"session header lacks {', '.join(missing)}")
    title = header.get("title")
    parent = header.get("parentSessionId")
    return SessionInfo(
        session_id=header["sessionId"],
        created_at=header["createdAt"],
        origin=header["origin"],
        title=title if isinstance(title, str) else None,
        parent_session_id=parent if isinstance(parent, str) else None,
    )
