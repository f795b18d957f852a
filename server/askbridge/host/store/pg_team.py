"""What one team store (store_postgres.py) holds for the many-host rules (G4-G8), wired:
this host's presence (pg_presence.py: its row, liveness lock and listening
connection), its leases (pg_leases.py), the sessions it follows (pg_follow.py), the
answers (pg_answers.py) and claims (pg_claims.py), and the database's clock as seen
from the host's (db_clock.py).

Every store is a host of the team: it registers when it opens and leaves when it
closes (its leases released and claims dropped, so another host may take its
sessions at once; a host that dies instead is found dead by its free lock). `serve`
is the work in the background: listening (or polling while it cannot) and renewing
leases and claims; the host starts it in its own task group (`tg.start(serve)`) and
cancels it before `close`. A store used without `serve` still writes safely (the
epoch fences every append) but its leases lapse after 10 s and it hears of nothing.
"""

from __future__ import annotations

import logging
import secrets
import socket

import anyio

from askbridge.core.clock import Clock, MonotonicClock
from askbridge.core.errors import StoreError

from . import pg_answers, pg_claims
from .db_clock import DatabaseClock
from .pg_answers import Answers
from .pg_claims import ClaimStore
from .pg_connections import Connections
from .pg_follow import Follower
from .pg_leases import LEASE_S, Leases
from .pg_presence import Presence

log = logging.getLogger("askbridge.store")

EVENTS_CHANNEL = "askbridge"
_LEAVE_S = 2.0  # a clean stop gives up handing its leases back after this


class Team:
    def __init__(self, db: Connections, presence: Presence, clock: Clock) -> None:
        self.host_id = presence.host_id
        self.presence = presence
        self.db_clock = DatabaseClock(clock)
        self.leases = Leases(db, self.host_id, self.db_clock)
        self.follower = Follower(db)
        self.answers = Answers(db, self.host_id, self.owned)
        self.claims = ClaimStore(db, self.host_id, self.owned, LEASE_S)
        presence.handlers = {
            EVENTS_CHANNEL: self.follower.notified,
            pg_answers.CHANNEL: self.answers.notified,
            pg_claims.CHANNEL: self.claims.notified,
        }
        presence.catch_ups = [self.follower.catch_up, self.answers.catch_up, self.claims.catch_up]
        self._db = db

    @classmethod
    async def join(
        cls, db: Connections, name: str | None = None, clock: Clock | None = None
    ) -> Team:
        """Register a new host on the store `db` is connected to (a random id, `name`
        defaulting to this machine's)."""
        host_id = secrets.token_hex(8)
        presence = await Presence.register(db.url, host_id, name or socket.gethostname())
        return cls(db, presence, clock or MonotonicClock())

    def owned(self) -> list[str]:
        """The sessions this host holds the lease of."""
        return list(self.leases.epochs)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen and renew until cancelled; started once listening (and caught up)."""
        async with anyio.create_task_group() as tasks:
            await tasks.start(self.presence.run)
            tasks.start_soon(self.leases.run)
            task_status.started()

    async def leave(self) -> None:
        """A clean stop: hand the leases back, drop the claims, remove this host's row and
        free its lock, giving up on the database after a moment (the lock frees itself
        when the connection closes, and leases lapse)."""
        with anyio.move_on_after(_LEAVE_S, shield=True):
            try:
                await self.leases.release(self.owned())
                await self.claims.release_all()
            except StoreError as exc:
                log.warning("handing the leases back failed: %s", exc.message)
            try:
                await self.presence.unregister(self._db.run)
            except StoreError as exc:
                log.warning("leaving the team store failed: %s", exc.message)
        await self.presence.close()
