"""The team store: the EventStore (store_api.py) on one PostgreSQL database (G1-G3).

Open it with `PostgresEventStore.open(url, data_dir)` (or store_open.open_store): it
takes the data directory's lock, as the SQLite store does (one host per directory,
H1), connects, creates or migrates the schema (pg_schema.py), checks the store is
the one the directory used before (team_identity.py) and registers as a host of the
team (pg_open.py). `close()` leaves the team and releases the lock. Its driver,
psycopg 3, is imported only by these modules, which only a team store loads (a solo
host never pays for it).

Writes (G3): `append_encoded` is one statement per group commit, fenced on each
session's expected next sequence number and retried after a lost connection without
writing twice (pg_commit.py). The store remembers each session's next sequence
number after creating, loading or appending to it, and asks the database once for a
session it has not seen. A commit that fails forgets the numbers of its sessions.
`check_not_lost` and every write check the data directory (S5), as the SQLite store
does.

Many hosts (G4-G8, pg_team.py, started by `serve`): every write carries the lease's
epoch of each of its sessions and is refused inside its transaction when another
host took the session over (SessionFenced naming that host; nothing written). The
host calls `own(session_id, lost)` when it opens or creates a session (a session it
creates is its own under epoch 1) and is told through `lost` when it is taken
away; a store whose caller never owns a session takes its lease at its first write
(solo use). `team.follower`, `team.answers` and `team.claims` are the followers'
hints (with `load_since`), first answer wins and claims across hosts.

Reads are one statement each (one snapshot): a session's row and its events, checked
whole (S6) as session_rows.py checks SQLite's: a listed session without events, a
gap, a missing tail (next_seq beyond the last event) or a body that is not a JSON
object is StoreDamaged naming the store and the session. `load_lazily` leaves the
bodies its folds do not read undecoded (event_rows.py) but holds their text: a lazy
read must not wait on the network.

Unreachable: every call retries on new connections for up to `unavailable_after`
seconds (10), then fails with STORE_UNAVAILABLE (pg_connections.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from functools import partial

import anyio
import psycopg.errors

from askbridge.core.clock import Clock

from ..log.events import Event
from . import pg_rows
from .datadir import DataDirLock
from .event_rows import BadEvent, decode
from .pg_commit import AnswerSpent, Commit, Fenced, NotOwner, Use, event_type
from .pg_connections import UNAVAILABLE_AFTER_S, Conn, Connections
from .pg_follow import events_since
from .pg_leases import Lost
from .pg_open import open_parts
from .pg_team import Team
from .store_api import (
    SessionInfo,
    StoreDamaged,
    StoreError,
    encode_event,
    session_info_from_header,
)
from .team_records import Ownership, SessionFenced

_NOTHING_WRITTEN = "; nothing of this commit was written"
# A new session is its creator's, under epoch 1 (G4); followers hear of its header (G5).
_CREATE = """
WITH s AS (
    INSERT INTO askbridge.sessions (id, created_at, origin, parent_session_id, title, next_seq,
        owner_host, owner_epoch, lease_until)
    VALUES (%(id)s, %(created_at)s, %(origin)s, %(parent)s, %(title)s, 1,
        %(host)s, 1, clock_timestamp() + %(lease)s)
    RETURNING id
)
INSERT INTO askbridge.events (session_id, seq, body, type, epoch)
SELECT id, 0, %(body)s::json, %(type)s, 1
FROM s CROSS JOIN LATERAL (SELECT pg_notify('askbridge', s.id || ' 0')) AS told
"""


class PostgresEventStore:
    def __init__(
        self,
        connections: Connections,
        store_id: str,
        team: Team,
        lock: DataDirLock | None = None,
    ) -> None:
        """A store on `connections` whose schema is open, as the host `team` (`open`
        makes one)."""
        self._db = connections
        self.where = connections.where
        self.store_id = store_id
        self.team = team
        self._lock = lock
        self._next_seq: dict[str, int] = {}

    @classmethod
    async def open(
        cls,
        url: str,
        data_dir: str | None = None,
        *,
        unavailable_after: float = UNAVAILABLE_AFTER_S,
        host_name: str | None = None,
        clock: Clock | None = None,
    ) -> PostgresEventStore:
        """The store at `url` for the host of `data_dir` (locked; its remembered store
        checked, or remembered now), registered as a host named `host_name` (this
        machine's name by default) whose monotonic clock is `clock`. Without `data_dir`:
        no lock and no identity check."""
        parts = await open_parts(url, data_dir, unavailable_after, host_name, clock)
        return cls(*parts)

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen, poll when that fails, renew leases and claims, until cancelled
        (pg_team.py); started once listening."""
        await self.team.serve(task_status=task_status)

    async def own(self, session_id: str, lost: Lost | None = None) -> Ownership:
        """Take (or keep) the session's lease (G4, pg_leases.py), for a host that opens
        or creates it; `lost(SessionFenced)` is called once if another host takes it
        later. SessionFenced naming the owner when it is refused."""
        self._check_writable()
        ownership = await self.team.leases.acquire(session_id, lost)
        self._next_seq.pop(session_id, None)  # another owner may have written meanwhile
        return ownership

    async def release(self, session_id: str) -> None:
        """Give the session's lease back: another host may take it at once."""
        await self.team.leases.release([session_id])

    async def create_session(self, header: Event) -> None:
        info = session_info_from_header(header)
        body = encode_event(header)
        params = {
            "id": info.session_id,
            "created_at": info.created_at,
            "origin": info.origin,
            "parent": info.parent_session_id,
            "title": info.title,
            "body": body,
            "type": event_type(body),
            "host": self.team.host_id,
            "lease": timedelta(seconds=self.team.leases.lease_s),
        }

        async def create(conn: Conn, retried: bool) -> None:
            try:
                await conn.execute(_CREATE, params)
            except psycopg.errors.UniqueViolation as exc:
                # A retry after a lost reply finds its own header: created, once (G3).
                if retried and await pg_rows.header_of(conn, info.session_id) == body:
                    return
                raise ValueError(f"session {info.session_id!r} already exists") from exc

        self._check_writable()
        await self._db.run("write to", create)
        self._next_seq[info.session_id] = 1
        self.team.leases.holds(info.session_id, 1)

    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        # Encode before anything is sent: one bad event means none of the batch is written.
        await self.append_encoded([(session_id, [encode_event(event) for event in events])])

    async def append_encoded(
        self, batches: Sequence[tuple[str, Sequence[str]]], uses: Sequence[Use] = ()
    ) -> None:
        """Append each session's events in one transaction, one statement (pg_commit.py):
        all of them are committed, or none (KeyError for an unknown session,
        SessionFenced for one another host owns). `uses` are the answers the events
        consume (session, call, index of the event among that session's)."""
        self._check_writable()
        ids = {session_id for session_id, _ in batches}
        leases = self.team.leases
        for session_id in sorted(ids - leases.epochs.keys()):
            try:  # a store used without `own`: take each session at its first write
                await self.own(session_id)
            except SessionFenced as exc:
                where, owner, name = self.where, exc.owner_host, exc.owner_name
                raise SessionFenced(session_id, owner, name, where, _NOTHING_WRITTEN) from None
        unknown = [session_id for session_id in ids if session_id not in self._next_seq]
        if unknown:
            await self._read_next_seq(unknown)
        uses = [*uses, *self.team.answers.uses_in(batches)]  # answers the results carry (G6)
        commit = Commit.of(batches, self._next_seq, leases.epochs, self.team.host_id, uses)
        if not commit.ids:
            return
        try:
            await self._db.run("write to", commit.attempt)
        except BaseException as exc:
            for session_id in ids:
                self._next_seq.pop(session_id, None)
            if isinstance(exc, NotOwner):
                fenced = SessionFenced(
                    exc.session_id, exc.owner, exc.owner_name, self.where, _NOTHING_WRITTEN
                )
                leases.lose(fenced)
                raise fenced from None
            if isinstance(exc, AnswerSpent):
                raise StoreError(
                    f"cannot write to the team store {self.where}: {exc}; nothing of this "
                    "commit was written"
                ) from None
            if isinstance(exc, Fenced):
                raise StoreError(
                    f"cannot write to the team store {self.where}: session "
                    f"{exc.session_id!r} was written by another writer ({exc}); "
                    "nothing of this commit was written"
                ) from None
            raise
        for session_id, after in zip(commit.ids, commit.after, strict=True):
            self._next_seq[session_id] = after
        self.team.answers.used(uses)

    async def _read_next_seq(self, session_ids: list[str]) -> None:
        found = await self._db.run("read", lambda conn, _: pg_rows.next_seqs(conn, session_ids))
        for session_id in session_ids:
            if session_id not in found:
                raise KeyError(session_id)
            self._next_seq[session_id] = found[session_id]

    async def load(self, session_id: str) -> list[Event]:
        rows = await self._rows(session_id)
        damaged = partial(self._damaged, session_id)
        return pg_rows.events(rows, self._bad_event(session_id), damaged)

    async def load_lazily(self, session_id: str) -> list[Event]:
        """`load`, with the bodies no fold reads decoded on first use (pg_rows.py)."""
        rows = await self._rows(session_id)
        damaged = partial(self._damaged, session_id)
        return pg_rows.lazy_events(rows, self._bad_event(session_id), damaged)

    async def load_since(self, session_id: str, after_seq: int) -> list[Event]:
        """The session's events after `after_seq`, in order (a follower's read, G5);
        StoreDamaged when they are not all there."""
        self._check_open()
        rows = await self._db.run("read", lambda conn, _: events_since(conn, session_id, after_seq))
        if rows and (rows[0][0] != after_seq + 1 or rows[-1][0] != after_seq + len(rows)):
            numbered = f"{len(rows)} events numbered {rows[0][0]}..{rows[-1][0]}"
            raise self._damaged(session_id, f"its events after {after_seq} are {numbered}")
        bad = partial(_bad_event_at, self._bad_event(session_id), after_seq + 1)
        return decode([body for _, body in rows], bad)

    async def _rows(self, session_id: str) -> list[pg_rows.Row]:
        self._check_open()
        damaged = partial(self._damaged, session_id)
        rows = await self._db.run(
            "read", lambda conn, _: pg_rows.session_rows(conn, session_id, damaged)
        )
        self._next_seq[session_id] = len(rows)
        return rows

    async def exists(self, session_id: str) -> bool:
        self._check_open()
        return await self._db.run("read", lambda conn, _: pg_rows.exists(conn, session_id))

    async def list_sessions(self) -> list[SessionInfo]:
        self._check_open()
        return await self._db.run("read", lambda conn, _: pg_rows.session_infos(conn))

    def check_not_lost(self) -> None:
        self._check_open()
        if self._lock is not None:
            self._lock.check()

    async def close(self) -> None:
        """Leave the team (pg_team.py: leases handed back) and close; `serve` first ends."""
        if self._db.closed:
            return
        try:
            await self.team.leave()
            await self._db.close()
        finally:
            if self._lock is not None:
                self._lock.release()

    def _check_open(self) -> None:
        if self._db.closed:
            raise StoreError(f"the team store {self.where} is closed")

    def _check_writable(self) -> None:
        self.check_not_lost()  # S5: no write once the data directory is gone

    def _damaged(self, session_id: str, problem: str) -> StoreDamaged:
        where = self.where
        return StoreDamaged(f"the team store {where} is damaged: session {session_id!r}: {problem}")

    def _bad_event(self, session_id: str) -> BadEvent:
        return lambda index: self._damaged(session_id, f"event {index} is not a JSON object")


def _bad_event_at(bad_event: BadEvent, first: int, index: int) -> StoreDamaged:
    return bad_event(first + index)
