"""Injected time for timed waits (architecture: "Time is injected").

A `Clock` tells the time in milliseconds and schedules callbacks at a time.
`MonotonicClock` is the real one (asyncio's loop timer, which anyio runs on
here); `ManualClock` moves only when a test calls `advance`, firing due
callbacks synchronously and in deadline order, so no test sleeps through a
real deadline.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Milliseconds on a monotonic scale."""
        ...

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> TimerHandle:
        """Run `callback` once when `now() >= when_ms` (soon, if already due)."""
        ...


class MonotonicClock:
    def now(self) -> float:
        return time.monotonic() * 1000.0

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> TimerHandle:
        loop = asyncio.get_running_loop()
        delay = max(0.0, (when_ms - self.now()) / 1000.0)
        return loop.call_later(delay, callback)


class _ManualTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """A clock for tests: time moves only through `advance` / `set`."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._heap: list[tuple[float, int, _ManualTimer, Callable[[], None]]] = []
        self._seq = itertools.count()

    def now(self) -> float:
        return self._now

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _ManualTimer()
        heapq.heappush(self._heap, (when_ms, next(self._seq), timer, callback))
        if when_ms <= self._now:
            self._fire_due()
        return timer

    def advance(self, ms: float) -> None:
        self.set(self._now + ms)

    def set(self, when_ms: float) -> None:
        """Move to `when_ms`, firing every due timer at its own time, in order."""
        while self._heap and self._heap[0][0] <= when_ms:
            due, _, timer, callback = heapq.heappop(self._heap)
            self._now = max(self._now, due)
            if not timer.cancelled:
                callback()
        self._now = max(self._now, when_ms)

    def _fire_due(self) -> None:
        self.set(self._now)

    @property
    def pending_timers(self) -> int:
        return sum(1 for _, _, t, _ in self._heap if not t.cancelled)
