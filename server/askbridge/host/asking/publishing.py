"""After each commit, tell who follows a session what it changed (behavior.md D1, S2, M7).

`Publisher.publish` derives the session updates from the committed events
(host/log/updates.py, one mapping) and sends them, with the view's changes, to
every follower of the session (view changes first, then updates: the order the
transcripts fix), then to every listener added with `add_listener` — an
observer of every root session's updates and view changes (embedders, tests).
Sending never waits: each link queues on its own connection (M7).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..log import events as ev
from .clients import Subscribers


class HostListener(Protocol):
    def on_update(self, session_id: str, update: dict[str, Any]) -> None: ...

    def on_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None: ...


class Publisher:
    def __init__(self, subscribers: Subscribers) -> None:
        self._subscribers = subscribers
        self._listeners: list[HostListener] = []
        self._updates_for: Callable[[Sequence[ev.Event]], list[dict[str, Any]]] | None = None

    def publish(
        self, session_id: str, events: Sequence[ev.Event], changes: list[dict[str, Any]]
    ) -> None:
        updates_for = self._updates_for
        if updates_for is None:
            updates_for = self._updates_for = _import_updates_for()
        updates = updates_for(events)
        if not updates and not changes:
            return
        for client in self._subscribers.of(session_id):
            if changes:
                client.link.send_view_changes(session_id, changes)
            if updates:
                client.link.send_updates(session_id, updates)
        if not self._listeners:
            return  # the usual case: nobody observes every session
        for listener in list(self._listeners):
            if changes:
                listener.on_view_changes(session_id, changes)
            for update in updates:
                listener.on_update(session_id, update)

    def add_listener(self, listener: HostListener) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None


def _import_updates_for() -> Callable[[Sequence[ev.Event]], list[dict[str, Any]]]:
    """Lazily, as before (not on the start-up path), and once: an import statement in
    `publish` would cost a call into the import machinery per commit."""
    from ..log.updates import updates_for

    return updates_for
