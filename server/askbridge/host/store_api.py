"""The interface every event store keeps (SQLite on disk, or in memory for unit tests).

Durability contract (behavior.md D1/D2): when `append` returns, its events are
committed in one transaction — all of them or none survive `kill -9`. Callers
group consecutive events into one `append` to share a commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .events import Event


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
