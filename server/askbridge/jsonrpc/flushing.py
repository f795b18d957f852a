"""When the writers' held frames leave (writer.py): one callback per event-loop turn for all
the writers that queued an urgent frame, one timer for all those holding notifications.

A question shown in ten windows queues frames on ten writers in one pass. Each writer
arming its own `call_soon` for the card, its own `call_later` for the updates and
cancels before it, and cancelling that timer when the card came, cost the host more
per window than encoding the frames did. `Flushes` (one per loop) keeps the writers
due in the next turn in the order they asked, the writers holding notifications
with their deadlines (`notify_delay` after the first frame held), and one timer, at
the earliest deadline.

A batch (`open_batch` ... `close_batch`) is a stretch of one callback after which
everything it queued may leave at once: the host's group commit opens one around
telling a commit's followers and starting its asks (host/store/commits.py), so a
card is written in the loop turn of its commit, not in one more turn after it.
While a batch is open, a writer due "in the next turn" waits for the batch's end
instead (no callback is scheduled); closing the outermost batch flushes every
writer due, in the order they asked. Notifications
held for their delay are not affected: they still wait for an urgent frame or
their deadline.

Nothing raises out of the scheduler: a writer's `flush` that raises is logged and
passed over, and the rest of the turn still runs. Each writer asks once until it has
flushed (writer.py: `_flush_urgent`), so one skipped because an earlier one raised
would never ask again: its window would wait for a card forever.
"""

from __future__ import annotations

import asyncio
import logging
import math
import weakref
from collections.abc import Callable
from typing import Protocol

logger = logging.getLogger("askbridge.jsonrpc")


class Flushable(Protocol):
    def flush(self) -> None: ...


class Flushes:
    __slots__ = (
        "_batches",
        "_due",
        "_held",
        "_loop",
        "_timer",
        "_timer_at",
        "_turn_scheduled",
    )

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._due: list[Flushable] = []  # flushed in the next loop turn, in this order
        self._turn_scheduled = False
        self._batches = 0  # open batches: the due wait for the outermost one's end
        self._held: dict[Flushable, float] = {}  # writer -> when its notifications must leave
        self._timer: asyncio.TimerHandle | None = None
        self._timer_at = math.inf

    def next_turn(self, writer: Flushable) -> None:
        """Flush `writer` in the next loop turn, or at the end of the open batch (it asks
        once until it has flushed)."""
        self._due.append(writer)
        self._schedule_flush_due()

    def _schedule_flush_due(self) -> None:
        """One callback in the next turn for all that is due, none while a batch is open."""
        if not self._turn_scheduled and not self._batches:
            self._turn_scheduled = True
            self._loop.call_soon(self._flush_due)

    def open_batch(self) -> None:
        """What is queued from now on leaves at `close_batch` (batches nest)."""
        self._batches += 1

    def close_batch(self) -> None:
        """The outermost batch's end: flush every writer due, now."""
        self._batches -= 1
        if not self._batches:
            self._flush_now()

    def hold(self, writer: Flushable, delay: float) -> None:
        """Flush `writer` within `delay` seconds (sooner if it flushes first: `release`)."""
        if writer in self._held:
            return
        deadline = self._loop.time() + delay
        self._held[writer] = deadline
        if deadline < self._timer_at:
            self._arm(deadline)

    def release(self, writer: Flushable) -> None:
        """`writer` flushed: it holds nothing any more; no timer outlives the last one."""
        self._held.pop(writer, None)
        if not self._held and self._timer is not None:
            self._timer.cancel()
            self._timer, self._timer_at = None, math.inf

    def _arm(self, deadline: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer, self._timer_at = self._loop.call_at(deadline, self._flush_held), deadline

    def _flush_due(self) -> None:
        self._turn_scheduled = False
        if not self._batches:  # else the open batch's end flushes them
            self._flush_now()

    def _flush_now(self) -> None:
        due, self._due = self._due, []
        for writer in due:
            _run_alone(writer.flush)

    def _flush_held(self) -> None:
        # Every writer due by the time this timer was set for: the loop may run a timer
        # a clock tick early, and a writer must not wait for a second timer then.
        now = self._timer_at
        self._timer, self._timer_at = None, math.inf
        for writer, deadline in list(self._held.items()):
            if deadline <= now:
                # released here, not only by its flush: one that raises must not be
                # found due again by every timer from now on
                del self._held[writer]
                _run_alone(writer.flush)  # its own release finds nothing held
        if self._held:
            self._arm(min(self._held.values()))


def _run_alone(step: Callable[[], None]) -> None:
    """`step()`; what it raises is logged, and the caller goes on to the next."""
    try:
        step()
    except Exception:
        logger.exception("flushing failed; the rest of the turn is still flushed")


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Flushes] = (
    weakref.WeakKeyDictionary()
)


def flushes_of(loop: asyncio.AbstractEventLoop) -> Flushes:
    """The loop's one `Flushes`."""
    flushes = _BY_LOOP.get(loop)
    if flushes is None:
        flushes = _BY_LOOP[loop] = Flushes(loop)
    return flushes
