"""`settle()`: let every task of the running loop run until all are blocked, no real time passing.

Shared by the in-process tests (tests/ is on sys.path through its conftest).
asyncio has no public look at what is ready to run, so the tests run on
`SettlingLoop` (tests/conftest.py hands it to pytest-asyncio through its
`pytest_asyncio_loop_factories` hook): the default selector loop, which notes
each callback queued through its public `call_soon` and forgets it once it has
run. Every task that is ready to run has its step queued that way, and so has
every waiter a finished future wakes — the group commit (host/store/commits.py)
releases its waiters from one such callback at the end of a loop turn. So when
nothing queued is left, every task is blocked on something still to come.

anyio's `wait_all_tasks_blocked` is not enough here: it counts a task waiting on
a future as blocked even when a callback already queued will release it, and it
sleeps 0.1 s between looks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import Context
from typing import Any


class SettlingLoop(asyncio.SelectorEventLoop):
    """The default event loop, remembering the callbacks queued on it and not yet run."""

    def __init__(self) -> None:
        super().__init__()
        self.queued: set[asyncio.Handle] = set()

    def call_soon(
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        entry = _Queued(self.queued, callback)
        entry.handle = super().call_soon(entry, *args, context=context)
        self.queued.add(entry.handle)
        return entry.handle

    def call_soon_threadsafe(
        self, callback: Callable[..., object], *args: Any, context: Context | None = None
    ) -> asyncio.Handle:
        entry = _Queued(self.queued, callback)
        entry.handle = super().call_soon_threadsafe(entry, *args, context=context)
        self.queued.add(entry.handle)
        return entry.handle

    def idle(self) -> bool:
        """True when no callback queued through `call_soon` is waiting to run."""
        self.queued -= {handle for handle in self.queued if handle.cancelled()}
        return not self.queued


class _Queued:
    """A queued callback that leaves `queued` as it runs."""

    __slots__ = ("callback", "handle", "queued")

    def __init__(self, queued: set[asyncio.Handle], callback: Callable[..., object]) -> None:
        self.queued, self.callback = queued, callback
        self.handle: asyncio.Handle | None = None

    def __call__(self, *args: Any) -> None:
        if self.handle is not None:
            self.queued.discard(self.handle)
        self.callback(*args)


async def settle() -> None:
    """Let every task run until all are blocked on something, without real time passing.

    Idle twice in a row: a socket or pipe the loop found ready queues its callback
    behind this task's own step (not through `call_soon`); one more turn runs it, and
    whatever it wakes is queued where `idle()` sees it.
    """
    loop = asyncio.get_running_loop()
    if not isinstance(loop, SettlingLoop):
        raise RuntimeError("settle() needs the tests' SettlingLoop (tests/conftest.py)")
    idle_turns = 0
    for _ in range(10_000):
        await asyncio.sleep(0)
        idle_turns = idle_turns + 1 if loop.idle() else 0
        if idle_turns == 2:
            return
    raise AssertionError("tasks never settled: something is spinning")
