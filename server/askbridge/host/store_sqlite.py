"""The durable EventStore: one SQLite file (`askbridge.db`) in the data directory.

Open it through `datadir.open_store`, which also takes the data directory's
lock; `SQLiteEventStore(path)` alone does not stop a second process.

Durability (behavior.md D1/D2): WAL journal with synchronous=NORMAL, which
survives `kill -9` of this process (not power loss — that is a deliberate
trade for commit speed). `append` writes its whole batch in one transaction,
so a batch, and every event in it, is either fully present or absent.

Layout: `sessions` (one row per session, taken from its header), `events`
(JSON text per event, keyed by session and a per-session sequence number
starting at 0 for the header) and `schema_version` (one row). The schema
grows only through `MIGRATIONS`: entry i takes version i to i+1, so a file
from any older release is brought up to date on open. To change the schema,
append a function; never edit a released one.

Anything wrong with the file — not SQLite, damaged, not ours, from a newer
askbridge — raises `StoreError` naming the file and the problem.
"""

from __future__ import annotations

import gc
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from .events import Event
from .store_api import SessionInfo, StoreError, encode_event, session_info_from_header

# StoreError lives in store_api (the memory store and the lock raise it too);
# it is re-exported here because callers reach for it next to the SQLite store.
__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SQLiteEventStore", "StoreError"]


def _migrate_to_v1(conn: sqlite3.Connection) -> None:
    """The first release's schema."""
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute(
        "CREATE TABLE sessions (id TEXT PRIMARY KEY, created_at TEXT NOT NULL,"
        " origin TEXT NOT NULL, parent_session_id TEXT)"
    )
    conn.execute(
        "CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id),"
        " seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq))"
    )


def _migrate_to_v2(conn: sqlite3.Connection) -> None:
    """Sessions get a `title` (filled from existing headers) and a creation-order index."""
    conn.execute("ALTER TABLE sessions ADD COLUMN title TEXT")
    headers = conn.execute("SELECT session_id, body FROM events WHERE seq = 0").fetchall()
    for session_id, body in headers:
        title = json.loads(body).get("title")
        if isinstance(title, str):
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (title, session_id))
    conn.execute("CREATE INDEX sessions_by_created_at ON sessions (created_at)")


Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = [_migrate_to_v1, _migrate_to_v2]
SCHEMA_VERSION = len(MIGRATIONS)

# SQLite's words for "these bytes are not a (healthy) database".
_DAMAGED = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}


class SQLiteEventStore:
    def __init__(self, path: Path | str, *, on_close: Callable[[], None] | None = None) -> None:
        """Open (creating or migrating if needed) the store at `path`.

        `on_close` runs once after the connection closes; `open_store` uses it
        to release the data directory lock.
        """
        self.path = Path(path)
        self._on_close = on_close
        self._closed = False
        # The host may call from worker threads; one connection, used by one at a time.
        self._mutex = threading.Lock()
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(exc) from exc
        try:
            self._configure()
            self._migrate()
        except BaseException as exc:
            self._conn.close()
            if isinstance(exc, sqlite3.Error):
                raise self._error(exc) from exc
            raise

    def create_session(self, header: Event) -> None:
        info = session_info_from_header(header)
        body = encode_event(header)
        with self._use() as conn, self._write(conn):
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (info.session_id,)).fetchone():
                raise ValueError(f"session {info.session_id!r} already exists")
            conn.execute(
                "INSERT INTO sessions (id, created_at, origin, parent_session_id, title)"
                " VALUES (?, ?, ?, ?, ?)",
                (info.session_id, info.created_at, info.origin, info.parent_session_id, info.title),
            )
            conn.execute(
                "INSERT INTO events (session_id, seq, body) VALUES (?, 0, ?)",
                (info.session_id, body),
            )

    def append(self, session_id: str, events: Sequence[Event]) -> None:
        # Encode before the transaction: one bad event means none of the batch is written.
        bodies = [encode_event(event) for event in events]
        with self._use() as conn, self._write(conn):
            (last,) = conn.execute(
                "SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
            if last is None:
                raise KeyError(session_id)
            conn.executemany(
                "INSERT INTO events (session_id, seq, body) VALUES (?, ?, ?)",
                [(session_id, last + 1 + i, body) for i, body in enumerate(bodies)],
            )

    def load(self, session_id: str) -> list[Event]:
        with self._use() as conn:
            rows = conn.execute(
                "SELECT body FROM events WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        if not rows:
            raise KeyError(session_id)
        return self._decode(session_id, [body for (body,) in rows])

    def exists(self, session_id: str) -> bool:
        with self._use() as conn:
            row = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return row is not None

    def list_sessions(self) -> list[SessionInfo]:
        with self._use() as conn:
            rows = conn.execute(
                "SELECT id, created_at, origin, title, parent_session_id FROM sessions"
                " ORDER BY created_at, rowid"
            ).fetchall()
        return [
            SessionInfo(
                session_id=session_id,
                created_at=created_at,
                origin=origin,
                title=title,
                parent_session_id=parent,
            )
            for session_id, created_at, origin, title, parent in rows
        ]

    def close(self) -> None:
        with self._mutex:
            if self._closed:
                return
            self._closed = True
            try:
                self._conn.close()
            finally:
                if self._on_close is not None:
                    self._on_close()

    def _configure(self) -> None:
        conn = self._conn
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StoreError(f"{self.path}: SQLite refused WAL journaling here (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        # Only matters if something bypasses the data dir lock; then wait, don't fail at once.
        conn.execute("PRAGMA busy_timeout = 5000")

    def _read_version(self) -> int:
        tables = {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master")}
        if not tables:
            return 0
        if "schema_version" not in tables:
            raise StoreError(f"{self.path} is an SQLite file but not an askbridge database")
        rows = self._conn.execute("SELECT version FROM schema_version").fetchall()
        if len(rows) != 1 or not isinstance(rows[0][0], int) or rows[0][0] < 1:
            raise StoreError(f"{self.path} is damaged: unreadable schema version {rows!r}")
        version: int = rows[0][0]
        return version

    def _migrate(self) -> None:
        version = self._read_version()
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path} has schema version {version}, newer than this askbridge "
                f"understands ({SCHEMA_VERSION}); upgrade askbridge or use another --data-dir"
            )
        with self._write(self._conn):
            # Re-read under the write lock in case another opener migrated meanwhile.
            version = self._read_version()
            for migrate in MIGRATIONS[version:]:
                migrate(self._conn)
            self._conn.execute("DELETE FROM schema_version")
            self._conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))

    @contextmanager
    def _use(self) -> Iterator[sqlite3.Connection]:
        """The connection, for one caller at a time, with SQLite failures made StoreErrors."""
        with self._mutex:
            if self._closed:
                raise StoreError(f"the event store {self.path} is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise self._error(exc) from exc

    @staticmethod
    @contextmanager
    def _write(conn: sqlite3.Connection) -> Iterator[None]:
        """One write transaction: committed on success, rolled back on any exception."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _decode(self, session_id: str, bodies: list[str]) -> list[Event]:
        # Fast path: one json.loads over the joined array beats one call per row.
        # The length and type checks catch a stored body that is not one object.
        # Parsed JSON holds no reference cycles, yet building ~10 containers per
        # event makes the cycle collector rescan the whole heap again and again;
        # pausing it here makes a 100,000-event load 3-4x faster.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            events = json.loads("[" + ",".join(bodies) + "]")
        except (ValueError, TypeError):
            events = None
        finally:
            if gc_was_enabled:
                gc.enable()
        if (
            isinstance(events, list)
            and len(events) == len(bodies)
            and all(type(event) is dict for event in events)
        ):
            return events
        # Slow path, only for a damaged file: find and name the bad event.
        decoded: list[Event] = []
        for index, body in enumerate(bodies):
            event = _json_object(body)
            if event is None:
                raise StoreError(
                    f"{self.path} is damaged: event {index} of session {session_id!r} "
                    "is not a JSON object"
                )
            decoded.append(event)
        return decoded

    def _error(self, exc: sqlite3.Error) -> StoreError:
        name = getattr(exc, "sqlite_errorname", "")
        if name in _DAMAGED:
            return StoreError(f"{self.path} is damaged or not an SQLite database ({exc})")
        return StoreError(f"cannot use the event store {self.path}: {exc}")


def _json_object(body: object) -> Event | None:
    """`body` parsed, if it is the text of one JSON object; else None."""
    if not isinstance(body, str):
        return None
    try:
        event = json.loads(body)
    except ValueError:
        return None
    return event if type(event) is dict else None
