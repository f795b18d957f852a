"""S10: a loaded session that nobody follows and that runs no turn is unloaded after
`after` seconds; it is loaded again (from its log) by the next method that names it.

host.py says when a session may have become idle (`idle`: its turns ended, its last
follower left, or it was loaded with nobody to follow it) and when it is in use again
(`busy`: a client follows it), and calls `sweep` from its once-a-second loop. A sweep
looks again before unloading: a session followed or running since is kept.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from .agents import AgentRegistry
from .session import Session

log = logging.getLogger("askbridge.host")


class Unloader:
    def __init__(
        self,
        sessions: dict[str, Session],
        registry: AgentRegistry,
        followers: Callable[[str], int],
        after: float,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sessions, self._registry, self._followers = sessions, registry, followers
        self.after = after
        self._now = now  # seconds; injected so that a test moves time itself
        self._idle_since: dict[str, float] = {}

    @property
    def interval(self) -> float:
        """How often to sweep: often enough for a short `after` (tests), at most 1 s."""
        return min(1.0, max(0.05, self.after / 2))

    def idle(self, session: Session) -> None:
        self._idle_since.setdefault(session.id, self._now())

    def busy(self, session_id: str) -> None:
        self._idle_since.pop(session_id, None)

    def _in_use(self, session: Session) -> bool:
        return session.running or self._followers(session.id) > 0

    def sweep(self) -> None:
        now = self._now()
        for session_id, since in list(self._idle_since.items()):
            session = self._sessions.get(session_id)
            if session is None or self._in_use(session):
                self._idle_since.pop(session_id, None)
            elif now - since >= self.after:
                self._idle_since.pop(session_id, None)
                self._registry.unregister(session.agent)
                del self._sessions[session_id]
                log.debug("unloaded session %s", session_id)
