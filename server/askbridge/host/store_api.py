"""The interface every event store keeps (SQLite on disk, or in memory for unit tests).

Durability contract (behavior.md D1/D2): when `append` returns, its events are
committed in one transaction — all of them or none survive `kill -9`. Callers
group consecutive events into one `append` to share a commit.

Rules both stores share (so the in-memory store behaves like the disk one):
events are stored as compact JSON text (`encode_event`), so an event that is
not plain JSON (a set, NaN, an object) is refused with TypeError/ValueError
before anything is written, and `load` always returns fresh dicts. A session's
row is derived from its header (`session_info_from_header`). Appending to or
loading an unknown session raises KeyError; creating an existing one raises
ValueError; any call after `close` raises StoreError.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from askbridge.core.errors import StoreDamaged, StoreError, StoreLost

from .events import SESSION_HEADER, Event

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
]


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    created_at: str
    origin: str
    title: str | None = None
    parent_session_id: str | None = None


class EventStore(Protocol):
    def create_session(self, header: Event) -> None:
        """Start a session whose first event is `header` (a session/header event)."""
        ...

    def append(self, session_id: str, events: Sequence[Event]) -> None:
        """Append and commit `events` in one transaction."""
        ...

    def load(self, session_id: str) -> list[Event]:
        """Every event of the session, in order; KeyError when there is no such session."""
        ...

    def exists(self, session_id: str) -> bool: ...

    def list_sessions(self) -> list[SessionInfo]:
        """Every session, oldest first."""
        ...

    def close(self) -> None: ...


def encode_event(event: Event) -> str:
    """The stored text of an event: compact JSON, non-ASCII kept, NaN refused."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


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
