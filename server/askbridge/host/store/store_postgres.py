"""The team store: the EventStore (store_api.py) on one PostgreSQL database (G1-G3).

Open it with `PostgresEventStore.open(url, data_dir)` (or store_open.open_store): it
takes the data directory's lock, as the SQLite store does (one host per directory,
H1), connects, creates or migrates the schema (pg_schema.py) and checks the store is
the one the directory used before (team_identity.py). `close()` releases the lock.
Its driver, psycopg 3, is imported only by these modules, which only a team store
loads (a solo host never pays for it).

Writes (G3): `append_encoded` is one statement per group commit, fenced on each
session's expected next sequence number and retried after a lost connection without
writing twice (pg_commit.py). The store remembers each session's next sequence
number after creating, loading or appending to it, and asks the database once for a
session it has not seen. A commit that fails forgets the numbers of its sessions.
`check_not_lost` and every write check the data directory (S5), as the SQLite store
does.

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

import secrets
from collections.abc import Sequence
from functools import partial

import psycopg.errors

from ..log.events import Event
from . import pg_rows
from .datadir import DataDirLock
from .event_rows import BadEvent
from .pg_commit import Commit, Fenced, event_type
from .pg_connections import UNAVAILABLE_AFTER_S, Conn, Connections
from .pg_schema import open_schema
from .private_files import make_private_dir, refusal
from .store_api import (
    SessionInfo,
    StoreDamaged,
    StoreError,
    encode_event,
    session_info_from_header,
)
from .team_identity import different_message, emptied_message, remember_store, remembered_store

_CREATE = """
WITH s AS (
    INSERT INTO askbridge.sessions (id, created_at, origin, parent_session_id, title, next_seq)
    VALUES (%(id)s, %(created_at)s, %(origin)s, %(parent)s, %(title)s, 1)
    RETURNING id
)
INSERT INTO askbridge.events (session_id, seq, body, type)
SELECT id, 0, %(body)s::json, %(type)s FROM s
"""


class PostgresEventStore:
    def __init__(
        self, connections: Connections, store_id: str, lock: DataDirLock | None = None
    ) -> None:
        """A store on `connections` whose schema is open (`open` makes one)."""
        self._db = connections
        self.where = connections.where
        self.store_id = store_id
        self._lock = lock
        self._next_seq: dict[str, int] = {}

    @classmethod
    async def open(
        cls,
        url: str,
        data_dir: str | None = None,
        *,
        unavailable_after: float = UNAVAILABLE_AFTER_S,
    ) -> PostgresEventStore:
        """The store at `url` for the host of `data_dir` (locked; its remembered store
        checked, or remembered now). Without `data_dir`: no lock and no identity check."""
        lock = None
        if data_dir is not None:
            make_private_dir(data_dir)
            lock = DataDirLock(data_dir)
            lock.acquire()
        db = Connections(url, unavailable_after=unavailable_after)
        try:
            remembered = remembered_store(data_dir) if data_dir is not None else None
            new_id = secrets.token_hex(16)

            async def schema(conn: Conn, _: bool) -> str | None:
                return await open_schema(
                    conn, db.where, create=remembered is None, new_store_id=new_id
                )

            store_id = await db.run("open", schema)
            if data_dir is not None:
                if store_id is None:
                    raise refusal(emptied_message(db.where, data_dir, str(remembered)))
                if remembered is not None and remembered != store_id:
                    raise refusal(different_message(db.where, data_dir, store_id, remembered))
                if remembered is None:
                    remember_store(data_dir, store_id)
            assert store_id is not None  # created: `remembered` was None
        except BaseException:
            await db.close()
            if lock is not None:
                lock.release()
            raise
        return cls(db, store_id, lock)

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

    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        # Encode before anything is sent: one bad event means none of the batch is written.
        await self.append_encoded([(session_id, [encode_event(event) for event in events])])

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Append each session's events in one transaction, one statement (pg_commit.py):
        all of them are committed, or none (KeyError for an unknown session)."""
        self._check_writable()
        ids = {session_id for session_id, _ in batches}
        unknown = [session_id for session_id in ids if session_id not in self._next_seq]
        if unknown:
            await self._read_next_seq(unknown)
        commit = Commit.of(batches, self._next_seq)
        if not commit.ids:
            return
        try:
            await self._db.run("write to", commit.attempt)
        except BaseException as exc:
            for session_id in ids:
                self._next_seq.pop(session_id, None)
            if isinstance(exc, Fenced):
                raise StoreError(
                    f"cannot write to the team store {self.where}: session "
                    f"{exc.session_id!r} was written by another writer ({exc}); "
                    "nothing of this commit was written"
                ) from None
            raise
        for session_id, after in zip(commit.ids, commit.after, strict=True):
            self._next_seq[session_id] = after

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
        if self._db.closed:
            return
        try:
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
