"""Claims on timed waits across hosts (G7, C1-C5), the store's part.

A client that shows a timed question claims its wait (C3) so the deadline stops; in a
team the client may be attached to any host, while the deadline fires on the
session's owner only (G7). So a claim is a row, `claims(session_id, call_id, host,
client, claimed_at, lease_until)`, written by the claimant's host: `claim` (again
for the same client only renews it), `release` (idempotent, C4). Several may
coexist (C5): the owner's deadline stays stopped while `claims(...)` lists any.

A claim is leased like a session (pg_leases.py renews this host's claims with its
sessions' leases, every 2.5 s, to the database's now + 10 s): when its host dies,
nobody renews it and it lapses 10 s later in the database's time (G7), so the wait
resumes without anyone having to notice the death. A live host's claim that lapsed
anyway (the host was paused past its lease) is not revived by its next renewal: it
is deleted, and its host told (`Leases.on_lapsed_claim`), since the owner may have
resumed the deadline and fired it meanwhile.

`remaining_ms` is the claimant's `{remainingMs}` (C3): the owner's deadline as its log
tells it, measured on the database's clock (G7).

Every claim and release notifies `askbridge_claim` with [session, call] (JSON, no
text), so the owner re-reads and pauses or resumes; a lapse notifies nobody (nothing
is written), so the owner re-reads at `Claims.until`, mapped to its own clock
(db_clock.py). `catch_up` hints (session, None), "any call may have changed", for
each session this host owns, for what was sent while its listening connection was
down.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from .pg_connections import Conn, Connections
from .pg_follow import Hints, session_call
from .team_records import Claim, Claims

CHANNEL = "askbridge_claim"

_NOTIFY = f"pg_notify('{CHANNEL}', json_build_array(session_id, call_id)::text)"
# One reading of the clock for both ends of the lease: claimed_at's default and the
# lease's end read clock_timestamp() apart, microseconds off under load.
_CLAIM = f"""
INSERT INTO askbridge.claims (session_id, call_id, host, client, claimed_at, lease_until)
SELECT %(session)s, %(call)s, %(host)s, %(client)s, t.now, t.now + %(lease)s
FROM (SELECT clock_timestamp() AS now) AS t
ON CONFLICT (session_id, call_id, host, client) DO UPDATE
SET lease_until = EXCLUDED.lease_until,
    claimed_at = CASE WHEN askbridge.claims.lease_until <= clock_timestamp()
        THEN EXCLUDED.claimed_at ELSE askbridge.claims.claimed_at END
RETURNING session_id, call_id, host, client, claimed_at, lease_until, {_NOTIFY}
"""
# A release also clears the question's lapsed claims of hosts that died.
_RELEASE = f"""
DELETE FROM askbridge.claims
WHERE session_id = %(session)s AND call_id = %(call)s
    AND ((host = %(host)s AND client = ANY (%(clients)s::text[]))
        OR lease_until <= clock_timestamp())
RETURNING {_NOTIFY}
"""
_RELEASE_ALL = f"DELETE FROM askbridge.claims WHERE host = %s RETURNING {_NOTIFY}"
_LIVE = """
SELECT clock_timestamp(), session_id, call_id, host, client, claimed_at, lease_until
FROM (SELECT 1) AS one LEFT JOIN askbridge.claims
    ON session_id = %s AND call_id = %s AND lease_until > clock_timestamp()
ORDER BY claimed_at, host, client
"""

# G7: a question's deadline as its log tells it, in the database's time: its tool/call's
# commit plus its timeout (the call's argument, else the session's); ms from now.
_REMAINING = """
SELECT CASE WHEN t >= 0 THEN
    EXTRACT(EPOCH FROM committed_at + make_interval(secs => t) - clock_timestamp()) * 1000 END
FROM (SELECT committed_at, coalesce(CASE WHEN json_typeof(body->'arguments'->'timeout')
        = 'number' THEN (body->'arguments'->>'timeout')::double precision END,
        %(default)s) AS t
    FROM askbridge.events
    WHERE session_id = %(session)s AND type = 'tool/call' AND body->>'callId' = %(call)s
) AS call
"""

ClaimHint = tuple[str, str | None]  # (session, call), or (session, None): any of its calls


def _call_of(hint: ClaimHint) -> ClaimHint:
    return hint


class ClaimStore:
    def __init__(
        self, db: Connections, host_id: str, owned: Callable[[], list[str]], lease_s: float
    ) -> None:
        self._db = db
        self.host_id = host_id
        self.lease_s = lease_s
        self._owned = owned
        self.hints: Hints[ClaimHint] = Hints(_call_of)

    async def claim(self, session_id: str, call_id: str, client: str) -> Claim:
        """Claim the wait for `client` of this host, or renew its claim."""
        params = {
            "session": session_id,
            "call": call_id,
            "host": self.host_id,
            "client": client,
            "lease": timedelta(seconds=self.lease_s),
        }

        async def write(conn: Conn, _: bool) -> Claim:
            cur = await conn.execute(_CLAIM, params)
            row = await cur.fetchone()
            assert row is not None
            return Claim(*row[:6])

        return await self._db.run("write to", write)

    async def release(self, session_id: str, call_id: str, *clients: str) -> None:
        """Release the claims of `clients` of this host on the wait; releasing one that
        is not there does nothing (C4)."""
        params = {"session": session_id, "call": call_id, "host": self.host_id}

        async def write(conn: Conn, _: bool) -> None:
            await conn.execute(_RELEASE, {**params, "clients": list(clients)})

        await self._db.run("write to", write)

    async def release_all(self) -> None:
        """Every claim of this host (a clean stop)."""

        async def write(conn: Conn, _: bool) -> None:
            await conn.execute(_RELEASE_ALL, (self.host_id,))

        await self._db.run("write to", write)

    async def claims(self, session_id: str, call_id: str) -> Claims:
        """The live claims on the wait, from every host, as of the database's now."""

        async def read(conn: Conn, _: bool) -> list[tuple[Any, ...]]:
            cur = await conn.execute(_LIVE, (session_id, call_id))
            return await cur.fetchall()

        rows = await self._db.run("read", read)
        live = tuple(Claim(*row[1:]) for row in rows if row[1] is not None)
        return Claims(live, rows[0][0])

    async def remaining_ms(self, session_id: str, call_id: str, default_s: float) -> float | None:
        """Milliseconds from the database's now to the question's logged deadline (its
        tool/call's commit plus its timeout, `default_s` when the call names none);
        None when the call is not logged or waits without a timeout (-1: no deadline)."""
        params = {"session": session_id, "call": call_id, "default": default_s}

        async def read(conn: Conn, _: bool) -> list[tuple[Any, ...]]:
            cur = await conn.execute(_REMAINING, params)
            return await cur.fetchall()

        rows = await self._db.run("read", read)
        return float(rows[0][0]) if rows and rows[0][0] is not None else None

    def notified(self, payload: str) -> None:
        """A notification on `askbridge_claim`: [session, call]."""
        hint = session_call(payload)
        if hint is not None:
            self.hints.tell(hint)

    async def catch_up(self) -> None:
        for session_id in self._owned():
            self.hints.tell((session_id, None))
