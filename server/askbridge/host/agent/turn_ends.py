"""Waiting for turns to record their end (behavior.md M6), so that it is durable first.

Two waits, each at most STOP_GRACE_S (then what is left is cancelled, and the
next load repairs it the same way, P7): `settle`, for the turns that a client's
detach ended — its front door exits only once what the departed client caused
is recorded — and `all_done`, for every turn when the host itself is leaving.
host.py tells it which turns a detach ended (`ending`) and when a session's
turns are done (`idle`).
"""

from __future__ import annotations

import anyio

from .session import Session

# How long leaving the host waits for turns to record their end (M6) before cancelling.
STOP_GRACE_S = 5.0


class TurnEnds:
    def __init__(self, sessions: dict[str, Session]) -> None:
        self._sessions = sessions
        self._all_done: anyio.Event | None = None  # set while leaving, once no turn runs
        self._ending: set[Session] = set()  # turns ended by a detach, not yet recorded
        self._ended = anyio.Event()

    def _running(self) -> bool:
        return any(s.running for s in self._sessions.values())

    def ending(self, session: Session) -> None:
        """A detach ended `session`'s turn, if one runs: `settle` waits for its record."""
        if session.running:
            self._ending.add(session)

    def idle(self, session: Session) -> None:
        """`session`'s turns are done (their end is recorded)."""
        if self._all_done is not None and not self._running():
            self._all_done.set()
        if session in self._ending:
            self._ending.discard(session)
            self._ended.set()

    async def settle(self) -> None:
        """Wait (at most STOP_GRACE_S) until the turns ended by detaches have recorded their
        end, so that what a departed client caused is durable before its front door exits."""
        with anyio.move_on_after(STOP_GRACE_S, shield=True):
            while self._ending:
                self._ended = anyio.Event()
                await self._ended.wait()

    async def all_done(self) -> None:
        """The host is leaving: wait (at most STOP_GRACE_S) until no turn runs."""
        if self._running():
            self._all_done = anyio.Event()
            with anyio.move_on_after(STOP_GRACE_S, shield=True):
                await self._all_done.wait()
