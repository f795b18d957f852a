"""TimedQuestionWait: one foreground timed wait and the claims held on it (TW4–TW5, C1–C5).

The wait has a fixed deadline. Its host timer runs only while no claim is held;
a claim stops it, and when the last claim leaves it is re-armed for
`max(0, deadline - now)`, so time spent claimed is never credited back. When
the timer fires unclaimed, the wait *expires*: its private signal aborts (the
answerer is told to stop) and `ask_timed` returns pending.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

from askbridge.protocol.vocabulary import WaitFrame

from .clock import Clock, TimerHandle
from .signal import AbortSignal

DEADLINE = "deadline"  # the private signal's reason when the unclaimed deadline passed (TW6)


class WaitClaim:
    """One client's hold on a wait. `release()` is idempotent (C4)."""

    def __init__(self, wait: TimedQuestionWait) -> None:
        self._wait = wait
        self.ended = AbortSignal()

    @property
    def held(self) -> bool:
        return not self.ended.aborted

    def release(self) -> None:
        if self.ended.aborted:
            return
        self.ended.abort()
        self._wait._on_release(self)


class TimedQuestionWait:
    def __init__(self, clock: Clock, timeout_ms: int) -> None:
        self.clock = clock
        self.deadline = clock.now() + timeout_ms
        self.signal = AbortSignal()  # private: never the turn's (TW4)
        self.expired = False
        self.ended = False
        self.shutdown = False
        self._claims: list[WaitClaim] = []
        self._timer: TimerHandle | None = None
        self.on_close: Callable[[], None] | None = None  # the service frees its slot (TW10)
        self._arm()

    @property
    def claim_count(self) -> int:
        return len(self._claims)

    def remaining_ms(self) -> int:
        return max(0, round(self.deadline - self.clock.now()))

    def _arm(self) -> None:
        if self.ended or self.expired or self._claims:
            return
        self._timer = self.clock.call_at(self.deadline, self._on_timer)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_timer(self) -> None:
        self._timer = None
        if not self._claims and not self.ended:
            self.expire()

    def expire(self) -> None:
        """TW6: the unclaimed deadline passed: abort only the private signal."""
        if self.expired or self.ended:
            return
        self.expired = True
        self._disarm()
        self.signal.abort(DEADLINE)

    def claim(self) -> WaitClaim | None:
        """C1–C3: a new claim, or None when there is nothing (left) to claim."""
        if self.ended or self.expired:
            return None
        if not self._claims and self.clock.now() >= self.deadline:
            self.expire()  # C2
            return None
        claim = WaitClaim(self)
        self._claims.append(claim)
        self._disarm()
        return claim

    def _on_release(self, claim: WaitClaim) -> None:
        if claim in self._claims:
            self._claims.remove(claim)
        if not self._claims:
            self._arm()  # TW5: re-armed for max(0, deadline - now)

    def close(self, *, shutdown: bool = False) -> None:
        """TW10: end the wait; every claim stream ends."""
        if shutdown and not self.ended:
            self.shutdown = True
            self.signal.abort("shutdown")
        self.ended = True
        self._disarm()
        claims, self._claims = self._claims, []
        for claim in claims:
            claim.ended.abort()
        on_close, self.on_close = self.on_close, None
        if on_close is not None:
            on_close()


class ClaimStream(AsyncIterator[WaitFrame]):
    """What `attach_wait` returns: one `{remainingMs}` frame, then open until released.

    The claim is taken when the stream is created, so the host timer stops at
    once. Closing the stream (or `release()`, or the claimant's signal
    aborting) releases it.
    """

    def __init__(self, wait: TimedQuestionWait | None, claimant: AbortSignal | None = None) -> None:
        self._claim: WaitClaim | None = None
        self._frame: WaitFrame | None = None
        self._remove_watch = None
        if wait is not None and not (claimant is not None and claimant.aborted):
            self._claim = wait.claim()
        if self._claim is not None:
            assert wait is not None
            self._frame = WaitFrame(remaining_ms=wait.remaining_ms())
            if claimant is not None:
                self._remove_watch = claimant.on_abort(self.release)

    @property
    def claimed(self) -> bool:
        return self._claim is not None and self._claim.held

    def release(self) -> None:
        # A stream its claimant closed yields nothing more, not even an unread frame.
        self._frame = None
        if self._claim is not None:
            self._claim.release()
        if self._remove_watch is not None:
            self._remove_watch()
            self._remove_watch = None

    async def __anext__(self) -> WaitFrame:
        if self._frame is not None:
            frame, self._frame = self._frame, None
            return frame
        if self._claim is not None:
            try:
                await self._claim.ended.wait()
            finally:
                self.release()  # cancelling the consumer releases too (C4)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self.release()

    async def __aenter__(self) -> ClaimStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.release()
