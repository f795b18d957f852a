"""AbortSignal: a one-shot cancellation flag that tasks can await.

A pending ask watches its signals (the turn's signal and a timed wait's
private signal) with callbacks; a claim stream awaits its claim's. A signal
may be created outside an event loop; the anyio events that waiters block on
are made lazily inside one.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio


class AbortSignal:
    def __init__(self) -> None:
        self._aborted = False
        self.reason: object = None
        self._events: list[anyio.Event] = []
        self._callbacks: list[Callable[[], None]] = []

    @property
    def aborted(self) -> bool:
        return self._aborted

    def abort(self, reason: object = None) -> None:
        if self._aborted:
            return
        self._aborted = True
        self.reason = reason
        events, self._events = self._events, []
        for event in events:
            event.set()
        callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_abort(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` once when aborted (at once if already). Returns a remover."""
        if self._aborted:
            callback()
            return lambda: None
        self._callbacks.append(callback)

        def remove() -> None:
            if callback in self._callbacks:
                self._callbacks.remove(callback)

        return remove

    def off_abort(self, callback: Callable[[], None]) -> None:
        """Forget `callback` (compared by ==, so a bound method again is the same one): the
        remover of a record that keeps no closure per callback (core/asking.py)."""
        if callback in self._callbacks:
            self._callbacks.remove(callback)

    async def wait(self) -> None:
        if self._aborted:
            return
        event = anyio.Event()
        self._events.append(event)
        try:
            await event.wait()
        finally:
            if event in self._events:
                self._events.remove(event)
