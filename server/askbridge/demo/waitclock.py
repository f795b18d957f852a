"""The countdown of a timed question, backed by real claims (docs/rules.md TW5, C1–C5).

A `userQuestions/ask` for a timed wait does not say how long is left; a claim
does (its one `$/progress` frame carries `remainingMs`). So when the card is
shown, `read_deadline()` claims the wait, notes the deadline and releases the
claim at once: the host deadline is fixed (TW5), so this costs the person
nothing and the server's timer keeps running. When the person starts typing,
`hold()` claims again and keeps the claim: the server's timer stops, and the
question can no longer time out under their fingers. The claim ends when the
wait does (the answer arrives and the server answers `attachWait` with null);
`release()` is for the paths where no answer is sent.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
from anyio.abc import TaskGroup

from askbridge.testing import AskbridgeClient, Claim


class WaitClock:
    def __init__(
        self,
        client: AskbridgeClient,
        session_id: str,
        call_id: str,
        task_group: TaskGroup,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.session_id, self.call_id = client, session_id, call_id
        self._task_group = task_group
        self._now = now
        self.deadline: float | None = None
        self.claim: Claim | None = None
        self.held_with_ms: int | None = None  # what was left when the claim was taken
        self._holding = False
        self._held = anyio.Event()  # set once hold() has its answer from the server

    async def read_deadline(self) -> None:
        """Claim briefly to learn the time left; `deadline` stays None if the wait is over."""
        peek = await self.client.claim(self.session_id, self.call_id)
        if peek.remaining_ms is not None:
            self.deadline = self._now() + peek.remaining_ms / 1000
        peek.release()

    def left(self) -> float | None:
        """Seconds left on the server's clock (as last learned), or None when unknown."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - self._now())

    @property
    def held(self) -> bool:
        return self.claim is not None and self.claim.held

    async def hold(self) -> None:
        """Claim the wait until it ends (the person is answering); harmless to call twice."""
        if self._holding:
            return
        self._holding = True
        try:
            self.claim = await self.client.claim(self.session_id, self.call_id)
            self.held_with_ms = self.claim.remaining_ms
        finally:
            self._held.set()

    async def settle(self) -> None:
        """Wait for a claim still on its way (the person typed and pressed Enter at once)."""
        if self._holding:
            await self._held.wait()

    def start_hold(self) -> None:
        """`hold()` from a synchronous callback such as a keystroke handler."""
        if not self._holding:
            self._task_group.start_soon(self.hold)

    def release(self) -> None:
        if self.claim is not None:
            self.claim.release()

    def status(self, typing_stops_it: bool = True) -> str:
        """One line for the countdown display."""
        if self.held:
            was = f" ({self.held_with_ms / 1000:.1f} s were left)" if self.held_with_ms else ""
            return f"⏸ clock stopped: this terminal holds a claim on the wait{was}"
        if self._holding:
            return "⏸ claiming the wait…"
        left = self.left()
        if left is None:
            return "⏱ timed question (time left unknown)"
        tail = " · typing stops it" if typing_stops_it else ""
        return f"⏱ {left:4.1f} s left on the server's clock{tail}"
