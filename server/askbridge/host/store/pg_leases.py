"""Per-session leases: one writer per session across the team's hosts (G4, G7, G8).

`acquire(session_id)` runs `askbridge.acquire` (pg_team_schema.py): the lease is
granted when nobody owns the session, this host already does, its lease lapsed
(`lease_until < clock_timestamp()`), or its owner's liveness lock is free (the owner
died: pg_presence.py); the epoch moves on when the owner changes. The epoch is what
every append carries (pg_commit.py): a host that lost the session writes nothing,
whatever it believes, so the lease needs no clock agreement for safety; the lease's
time only decides when a silent owner may be replaced.

`renew()` is one statement for all of this host's leases, its claims (pg_claims.py)
and its `hosts.last_seen`, every `renew_s` (2.5 s) from `run`, each extended to the
database's now + `lease_s` (10 s). A lease it no longer holds (another host took the
session after it lapsed) is lost: the session's epoch is forgotten and its `lost`
callback told once, with the SessionFenced naming the new owner; an append that
meets a newer epoch (store_postgres.py) does the same. Each renewal also reads the
database's clock against the host's monotonic one (db_clock.py: deadlines and claim
leases are mapped to local timers by that offset).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import anyio
import psycopg

from askbridge.core.errors import StoreError

from .db_clock import DatabaseClock
from .pg_connections import Conn, Connections
from .pg_schema import NO_SESSION
from .team_records import Ownership, SessionFenced

log = logging.getLogger("askbridge.store")

LEASE_S = 10.0
RENEW_S = 2.5

Lost = Callable[[SessionFenced], None]
LapsedClaim = Callable[[str, str, str], None]  # session, call, client

_ACQUIRE = """
SELECT o_epoch, o_why, o_owner, o_owner_name, o_lease_until
FROM askbridge.acquire(%s, %s, make_interval(secs => %s))
"""
_RENEW = """
WITH t AS MATERIALIZED (
    SELECT clock_timestamp() AS now
), held AS (
    SELECT * FROM unnest(%(ids)b::text[], %(epochs)b::int8[]) AS h (id, epoch)
), renewed AS (
    UPDATE askbridge.sessions s SET lease_until = (SELECT now FROM t) + %(lease)s
    FROM held h WHERE s.id = h.id AND s.owner_host = %(host)s AND s.owner_epoch = h.epoch
    RETURNING s.id
), claimed AS (
    UPDATE askbridge.claims c SET lease_until = (SELECT now FROM t) + %(lease)s
    WHERE c.host = %(host)s AND c.lease_until > (SELECT now FROM t)
), lapsed AS (
    DELETE FROM askbridge.claims c
    WHERE c.host = %(host)s AND c.lease_until <= (SELECT now FROM t)
    RETURNING c.session_id, c.call_id, c.client
), seen AS (
    UPDATE askbridge.hosts SET last_seen = (SELECT now FROM t) WHERE id = %(host)s
)
SELECT (SELECT now FROM t),
    (SELECT coalesce(json_agg(json_build_array(h.id, s.owner_host, o.name)), '[]')
        FROM held h LEFT JOIN askbridge.sessions s ON s.id = h.id
        LEFT JOIN askbridge.hosts o ON o.id = s.owner_host
        WHERE h.id NOT IN (SELECT id FROM renewed)),
    (SELECT coalesce(json_agg(json_build_array(session_id, call_id, client)), '[]')
        FROM lapsed)
"""
_RELEASE = """
UPDATE askbridge.sessions SET owner_host = NULL, lease_until = NULL
WHERE id = ANY (%(ids)b::text[]) AND owner_host = %(host)s
"""


class Leases:
    def __init__(
        self,
        db: Connections,
        host_id: str,
        clock: DatabaseClock,
        *,
        lease_s: float = LEASE_S,
        renew_s: float = RENEW_S,
    ) -> None:
        self._db = db
        self.host_id = host_id
        self.clock = clock
        self.lease_s = lease_s
        self.renew_s = renew_s
        self.epochs: dict[str, int] = {}  # the sessions this host owns, and their epochs
        self._lost: dict[str, Lost] = {}
        self.on_lapsed_claim: LapsedClaim | None = None

    def holds(self, session_id: str, epoch: int, lost: Lost | None = None) -> None:
        """This host holds `session_id` under `epoch` (it created it, or acquired it)."""
        self.epochs[session_id] = epoch
        if lost is not None:
            self._lost[session_id] = lost

    async def acquire(self, session_id: str, lost: Lost | None = None) -> Ownership:
        """The session's lease for this host (module docstring); SessionFenced naming the
        owner when it is refused, KeyError when there is no such session."""

        async def attempt(conn: Conn, _: bool) -> Any:
            try:
                cur = await conn.execute(_ACQUIRE, (session_id, self.host_id, self.lease_s))
            except psycopg.Error as exc:
                if exc.sqlstate == NO_SESSION:
                    raise KeyError(session_id) from None
                raise
            return await cur.fetchone()

        epoch, why, owner, owner_name, until = await self._db.run("write to", attempt)
        if why is None:
            raise SessionFenced(session_id, owner, owner_name, self._db.where)
        if why != "mine":
            log.info("session %s: lease taken (%s, from %s)", session_id, why, owner)
        self.holds(session_id, int(epoch), lost)
        return Ownership(session_id, int(epoch), str(why), owner, until)

    def lose(self, error: SessionFenced) -> None:
        """The session is another host's now: forget its epoch and tell its owner here."""
        self.epochs.pop(error.session_id, None)
        lost = self._lost.pop(error.session_id, None)
        log.warning("%s", error.message)
        if lost is not None:
            try:
                lost(error)
            except Exception:
                log.exception("telling that session %s was lost failed", error.session_id)

    async def release(self, session_ids: list[str]) -> None:
        """Give the leases back (a clean stop, a closed session): another host may take
        the sessions at once."""
        for session_id in session_ids:
            self.epochs.pop(session_id, None)
            self._lost.pop(session_id, None)

        async def release(conn: Conn, _: bool) -> None:
            await conn.execute(_RELEASE, {"ids": session_ids, "host": self.host_id})

        if session_ids:
            await self._db.run("write to", release)

    async def renew(self) -> None:
        """Renew every lease and claim of this host now (module docstring)."""
        held = dict(self.epochs)
        params = {
            "ids": list(held),
            "epochs": list(held.values()),
            "host": self.host_id,
            "lease": timedelta(seconds=self.lease_s),
        }

        async def attempt(conn: Conn, _: bool) -> Any:
            sent = self.clock.clock.now()
            cur = await conn.execute(_RENEW, params)
            row = await cur.fetchone()
            assert row is not None
            self.clock.observe(sent, self.clock.clock.now(), row[0])
            return row

        _, lost, lapsed = await self._db.run("write to", attempt)
        for session_id, owner, owner_name in lost:
            if self.epochs.get(session_id) == held[session_id]:  # not released meanwhile
                self.lose(SessionFenced(session_id, owner, owner_name, self._db.where))
        for session_id, call_id, client in lapsed:
            if self.on_lapsed_claim is not None:
                self.on_lapsed_claim(session_id, call_id, client)

    async def run(self) -> None:
        """Renew now and every `renew_s` seconds, until cancelled."""
        while True:
            try:
                await self.renew()
            except StoreError as exc:  # unreachable: the next round tries again
                log.warning("renewing the leases failed: %s", exc.message)
            await anyio.sleep(self.renew_s)
