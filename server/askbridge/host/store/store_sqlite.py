"""The durable EventStore: one SQLite file (`askbridge.db`) in the data directory.

Open it through `datadir.open_store`, which also makes the directory private
and takes its lock; `SQLiteEventStore(path)` alone does not stop a second
process. `SQLiteEventStore.open_read_only(path)` (or `datadir.open_store_read_only`)
reads a store that a running server may be writing: no lock, no writes, no
migration. The file itself (schema, migrations, checks at open) is sqlite_schema.py.

Durability (behavior.md D1/D2): WAL journal with synchronous=NORMAL, which
survives `kill -9` of this process (not power loss — that is a deliberate
trade for commit speed). `append` writes its whole batch in one transaction,
so a batch, and every event in it, is either fully present or absent;
`append_encoded` does the same for the batches of several sessions at once
(the host's group commit, commits.py).

Its coroutines (store_api.py) never await: each call runs inline, on the loop.
A question's commit (four events, 1.5 KB) takes 60–90 µs on the 2 shared cores
this was measured on, and handing it to a worker thread would add a hop of
60–85 µs (`anyio.to_thread.run_sync` or `asyncio.to_thread` of an empty
function), close to doubling it; the loop is better off waiting for the disk.

A write store is the only writer of its file (the data directory's lock), so
it remembers each session's next sequence number after the first append
instead of asking SQLite for `MAX(seq)` on every write; a failed transaction
forgets what it touched.

Failures (S4, S5, S6), all StoreError subclasses (store_api.py):
- A write that fails (disk full, a read-only or failing disk) raises StoreError
  (STORE_ERROR) naming the file. The transaction is rolled back whole and the
  store stays usable: reads go on, and a later write succeeds once the fault
  is gone. An event that cannot be encoded is refused before the transaction.
- `check_lost` (from `open_store`: the lock's identity check) runs inside
  every write transaction just before COMMIT; when it raises StoreLost the
  batch is rolled back and the StoreLost reaches the caller, on this write and
  every later one. Reads keep working. `check_not_lost()` runs the same check
  without writing, for a host that wants to notice while idle.
- Damage is StoreDamaged naming the file, and the session when reading one: at
  open (sqlite_schema.py), or for a session that is listed but has no events, lacks
  its header row, has a gap in its sequence numbers, has events but no row, or
  holds a body that is not one JSON object. Never KeyError, never an empty log.
  `load_lazily` checks the same, except that a body it leaves undecoded is checked
  when something first reads it (event_rows.py).

Layout: `sessions` (one row per session, taken from its header), `events`
(JSON text per event, keyed by session and a per-session sequence number
starting at 0 for the header, with its `type` and `head` beside it: event_rows.py)
and `schema_version` (one row). `load_lazily` reads those columns so that a
session's load does not decode the bodies its folds never read.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from ..log.events import SESSION_HEADER, Event
from .event_rows import LAZY_SELECT, BadEvent, columns, decode, decode_lazily, json_object
from .session_rows import event_body, listed, session_rows
from .sqlite_open import SCHEMA_VERSION, store_error
from .sqlite_schema import MIGRATIONS, open_connection, roll_back
from .store_api import (
    SessionInfo,
    StoreDamaged,
    StoreError,
    StoreLost,
    encode_event,
    session_info_from_header,
    session_infos_of,
)

# StoreError lives in store_api (the memory store and the lock raise it too);
# it is re-exported here because callers reach for it next to the SQLite store.
__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteEventStore", "StoreError"]

_INSERT_EVENT = "INSERT INTO events (session_id, seq, body, type, head) VALUES (?, ?, ?, ?, ?)"


class SQLiteEventStore:
    def __init__(
        self,
        path: Path | str,
        *,
        on_close: Callable[[], None] | None = None,
        check_lost: Callable[[], None] | None = None,
        read_only: bool = False,
        require_schema: bool = False,
        connection: sqlite3.Connection | None = None,
    ) -> None:
        """Open (creating or migrating if needed) the store at `path`.

        `on_close` runs once after the connection closes; `open_store` uses it
        to release the data directory lock. `check_lost` raises StoreLost when the
        data directory is gone; it runs before every COMMIT (vetoing it) and in
        `check_not_lost`. `read_only`: see `open_read_only`. `require_schema`: the
        directory had a store, so a file without its tables is refused (S6,
        store_identity.py). `connection`: one already open on `path` and current
        (`datadir.open_checked`, which checks before an inline host's first answer).
        """
        self.path = Path(path)
        self._on_close = on_close
        self._check_lost = check_lost
        self._closed = False
        self._lost: str | None = None
        # One connection, used by one caller at a time.
        self._mutex = threading.Lock()
        if connection is None:
            connection = open_connection(
                self.path, read_only=read_only, require_schema=require_schema
            )
        self._conn = connection
        self._next_seq: dict[str, int] = {}  # per session, once read (we are the only writer)

    @classmethod
    def open_read_only(cls, path: Path | str) -> SQLiteEventStore:
        """The store at `path` for reading beside a server that may be writing it.

        Takes no lock and never writes (when no server has them open, SQLite may
        create the `-wal`/`-shm` companions, with the database file's mode).
        """
        if not os.path.isfile(path):
            raise StoreError(f"no askbridge database at {path}")
        return cls(path, read_only=True)

    async def create_session(self, header: Event) -> None:
        info = session_info_from_header(header)
        body = encode_event(header)
        with self._write() as conn:
            if listed(conn, info.session_id):
                raise ValueError(f"session {info.session_id!r} already exists")
            conn.execute(
                "INSERT INTO sessions (id, created_at, origin, parent_session_id, title)"
                " VALUES (?, ?, ?, ?, ?)",
                (info.session_id, info.created_at, info.origin, info.parent_session_id, info.title),
            )
            conn.execute(_INSERT_EVENT, (info.session_id, 0, body, *columns(body)))
        self._next_seq[info.session_id] = 1

    async def append(self, session_id: str, events: Sequence[Event]) -> None:
        # Encode before the transaction: one bad event means none of the batch is written.
        await self.append_encoded([(session_id, [encode_event(event) for event in events])])

    async def append_encoded(self, batches: Sequence[tuple[str, Sequence[str]]]) -> None:
        """Append each session's events, given as their `encode_event` texts, in one
        transaction: all of them are committed, or none (KeyError for an unknown session)."""
        with self._write(batches) as conn:
            rows: list[tuple[str, int, str, str | None, str | None]] = []
            for session_id, bodies in batches:
                first = self._next_seq.get(session_id)
                if first is None:
                    first = self._read_next_seq(conn, session_id)
                for seq, body in enumerate(bodies, first):  # a loop: no generator per batch
                    kind, head = columns(body)
                    rows.append((session_id, seq, body, kind, head))
                self._next_seq[session_id] = first + len(bodies)
            conn.executemany(_INSERT_EVENT, rows)

    def _read_next_seq(self, conn: sqlite3.Connection, session_id: str) -> int:
        (last,) = conn.execute(
            "SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()
        if last is None:
            if listed(conn, session_id):
                raise self._damaged(session_id, "it is listed but has no events")
            raise KeyError(session_id)
        return int(last) + 1

    async def load(self, session_id: str) -> list[Event]:
        bodies = [body for (body,) in self._rows(session_id, "body")]
        return self._headed(session_id, decode(bodies, self._bad_event(session_id)))

    async def load_lazily(self, session_id: str) -> list[Event]:
        """`load`, with the bodies no fold reads decoded on first use (event_rows.py)."""
        texts = [text for (text,) in self._rows(session_id, LAZY_SELECT)]
        bad_event = self._bad_event(session_id)

        def read(seq: int) -> Event:
            with self._use("read", session_id) as conn:
                event = json_object(event_body(conn, session_id, seq))
            if event is None:
                raise bad_event(seq)
            return event

        return self._headed(session_id, decode_lazily(texts, bad_event, read))

    def _rows(self, session_id: str, what: str) -> list[Any]:
        with self._use("read", session_id) as conn, self._snapshot(conn):
            return session_rows(conn, session_id, what, partial(self._damaged, session_id))

    def _headed(self, session_id: str, events: list[Event]) -> list[Event]:
        if events[0].get("type") != SESSION_HEADER:
            raise self._damaged(session_id, f"its event 0 is not a {SESSION_HEADER}")
        return events

    async def exists(self, session_id: str) -> bool:
        """True also for a session that is listed but unreadable, or has events but no row:
        `load` then says what is damaged instead of the host calling it unknown (S6)."""
        with self._use("read", session_id) as conn:
            (found,) = conn.execute(
                "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?1)"
                " OR EXISTS (SELECT 1 FROM events WHERE session_id = ?1)",
                (session_id,),
            ).fetchone()
        return bool(found)

    async def list_sessions(self) -> list[SessionInfo]:
        with self._use("read") as conn:
            rows = conn.execute(
                "SELECT id, created_at, origin, title, parent_session_id FROM sessions"
                " ORDER BY created_at, rowid"
            ).fetchall()
        return session_infos_of(rows)

    def check_not_lost(self) -> None:
        with self._use("check"):
            if self._lost is None and self._check_lost is not None:
                try:
                    self._check_lost()
                except StoreLost as exc:
                    self._lost = exc.message
            if self._lost is not None:
                raise StoreLost(self._lost)

    async def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.close()
            finally:
                if self._on_close is not None:
                    self._on_close()

    def _open_connection(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError(f"the event store {self.path} is closed")
        return self._conn

    @contextmanager
    def _use(self, action: str, session_id: str | None = None) -> Iterator[sqlite3.Connection]:
        """The connection, for one caller at a time, with SQLite failures made StoreErrors."""
        with self._mutex:
            conn = self._open_connection()
            try:
                yield conn
            except sqlite3.Error as exc:
                context = f" (reading session {session_id!r})" if session_id else ""
                raise store_error(self.path, exc, action, context) from exc

    @contextmanager
    def _write(self, batches: Sequence[tuple[str, object]] = ()) -> Iterator[sqlite3.Connection]:
        """One write transaction (`_use`'s guard and errors, in one context manager: this is
        every commit's path): committed on success, rolled back whole on any exception (then
        the sequence numbers of the sessions in `batches` are read again on their next append)."""
        with self._mutex:
            conn = self._open_connection()
            if self._lost is not None:
                raise StoreLost(self._lost)  # S5: no write after the first StoreLost
            try:
                conn.execute("BEGIN IMMEDIATE")
                try:
                    yield conn
                    if self._check_lost is not None:
                        self._check_lost()  # S5: StoreLost vetoes the commit
                    conn.execute("COMMIT")
                except BaseException as exc:
                    roll_back(conn)
                    for session_id, _ in batches:
                        self._next_seq.pop(session_id, None)
                    if isinstance(exc, StoreLost):
                        self._lost = exc.message
                    raise
            except sqlite3.Error as exc:
                raise store_error(self.path, exc, "write to") from exc

    @staticmethod
    @contextmanager
    def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
        """Reads that see one state, also while another process (a server) writes."""
        conn.execute("BEGIN")
        try:
            yield
        finally:
            roll_back(conn)

    def _damaged(self, session_id: str, problem: str) -> StoreDamaged:
        return StoreDamaged(f"{self.path} is damaged: session {session_id!r}: {problem}")

    def _bad_event(self, session_id: str) -> BadEvent:
        return lambda index: self._damaged(session_id, f"event {index} is not a JSON object")
