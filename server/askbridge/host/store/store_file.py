"""The SQLite file under the event store: opening it, its schema and migrations, and the
checks that tell a damaged file from an empty one (S6). store_sqlite.py builds the
EventStore on the connection `open_connection` returns.

The schema grows only through `MIGRATIONS`: entry i takes version i to i+1, so
a file from any older release is brought up to date on open. To change the
schema, append a function; never edit a released one.

Failures are StoreErrors naming the file: StoreDamaged (STORE_DAMAGED) for bytes
that are not SQLite, corrupt pages, or a file shorter than its own header says
(checked before opening, when no WAL holds newer pages; a 0-byte file is a new,
empty store, as SQLite itself sees it); a plain StoreError for a file that is not
ours or from a newer askbridge.
"""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from .event_rows import columns
from .store_api import StoreDamaged, StoreError
from .store_identity import StoreMissing, lost_message


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


def _migrate_to_v3(conn: sqlite3.Connection) -> None:
    """Events get the columns a load folds by (event_rows.py), filled for every row
    already stored; a body that does not start with its type keeps them NULL (it is
    then decoded at each load, as every body was before)."""
    conn.execute("ALTER TABLE events ADD COLUMN type TEXT")
    conn.execute("ALTER TABLE events ADD COLUMN head TEXT")
    last = 0
    while True:  # in slices, so a large store is never in memory at once
        rows = conn.execute(
            "SELECT rowid, body FROM events WHERE rowid > ? ORDER BY rowid LIMIT 2000", (last,)
        ).fetchall()
        if not rows:
            return
        conn.executemany(
            "UPDATE events SET type = ?, head = ? WHERE rowid = ?",
            [(*columns(body), rowid) for rowid, body in rows if isinstance(body, str)],
        )
        last = rows[-1][0]


Migration = Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = [_migrate_to_v1, _migrate_to_v2, _migrate_to_v3]
SCHEMA_VERSION = len(MIGRATIONS)

# SQLite's words for "these bytes are not a (healthy) database".
_DAMAGED = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}


def store_error(path: Path, exc: sqlite3.Error, action: str, context: str = "") -> StoreError:
    """`exc` as the StoreError a caller gets: StoreDamaged when SQLite says the file is bad."""
    if getattr(exc, "sqlite_errorname", "") in _DAMAGED:
        return StoreDamaged(f"{path} is damaged or not an SQLite database ({exc}){context}")
    return StoreError(f"cannot {action} the event store {path}: {exc}{context}")


def open_connection(
    path: Path, *, read_only: bool, require_schema: bool = False
) -> sqlite3.Connection:
    """A configured connection to `path`, its schema current (migrated unless `read_only`).

    `require_schema`: the directory had a store (store_identity.py), so an SQLite file
    without askbridge's tables is a lost store (StoreMissing), not a new one.
    """
    check_length(path)
    try:
        return _open(path, read_only, "ro" if read_only else None, require_schema)
    except sqlite3.Error as exc:
        # Reading a WAL file needs its -shm, which a read-only filesystem (a mounted backup)
        # cannot give; with no -wal no connection is open anywhere, so the file is frozen.
        no_wal = not os.path.exists(path.with_name(path.name + "-wal"))
        if not (read_only and no_wal and exc.sqlite_errorname == "SQLITE_CANTOPEN"):
            raise store_error(path, exc, "open") from exc
    try:
        return _open(path, read_only, "ro&immutable=1", require_schema)
    except sqlite3.Error as exc:
        raise store_error(path, exc, "open") from exc


def _open(
    path: Path, read_only: bool, uri_query: str | None, require_schema: bool
) -> sqlite3.Connection:
    if uri_query is None:
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    else:
        uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode={uri_query}"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        _configure(conn, path, read_only)
        _migrate(conn, path, read_only, require_schema)
    except BaseException:
        conn.close()
        raise
    return conn


def check_length(path: Path) -> None:
    """StoreDamaged when the file is shorter than its own header says (S6).

    Only while no WAL exists: a WAL may hold pages the file does not have yet.
    Anything that is not an SQLite header is left for SQLite to call NOTADB.
    """
    try:
        if os.path.exists(path.with_name(path.name + "-wal")):
            return
        with open(path, "rb") as file:
            header = file.read(100)
            length = os.fstat(file.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(f"cannot read the event store {path}: {exc.strerror}") from exc
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return
    page_size = int.from_bytes(header[16:18], "big")
    expected = (65536 if page_size == 1 else page_size) * int.from_bytes(header[28:32], "big")
    # The header's page count is valid only while the change counter matches its stamp.
    if header[24:28] == header[92:96] and length < expected:
        raise StoreDamaged(
            f"{path} is damaged: it has {length} bytes where its header says {expected} "
            "(a truncated copy?)"
        )


def roll_back(conn: sqlite3.Connection) -> None:
    """End the open transaction, if any; a failing ROLLBACK must not hide the first error."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite has undone what it could; the transaction's own error is raised


def _configure(conn: sqlite3.Connection, path: Path, read_only: bool) -> None:
    if read_only:
        conn.execute("PRAGMA query_only = ON")
    else:
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise StoreError(f"{path}: SQLite refused WAL journaling here (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    # Only matters beside another connection (a reader, or something that bypassed
    # the data dir lock); then wait, don't fail at once.
    conn.execute("PRAGMA busy_timeout = 5000")


def _read_version(conn: sqlite3.Connection, path: Path) -> int:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return 0
    if "schema_version" not in tables:
        raise StoreError(f"{path} is an SQLite file but not an askbridge database")
    rows = conn.execute("SELECT version FROM schema_version").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int) or rows[0][0] < 1:
        raise StoreDamaged(f"{path} is damaged: unreadable schema version {rows!r}")
    version: int = rows[0][0]
    return version


def _migrate(conn: sqlite3.Connection, path: Path, read_only: bool, require_schema: bool) -> None:
    version = _read_version(conn, path)
    if version == SCHEMA_VERSION:
        return
    if version == 0 and require_schema:
        raise StoreMissing(lost_message(path.parent, path, "holds no askbridge data"))
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path} has schema version {version}, newer than this askbridge "
            f"understands ({SCHEMA_VERSION}); upgrade askbridge or use another --data-dir"
        )
    if read_only:
        raise StoreError(
            f"{path} has schema version {version}; start askbridge on it once "
            f"to bring it to version {SCHEMA_VERSION}"
        )
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock in case another opener migrated meanwhile.
        version = _read_version(conn, path)
        for migrate in MIGRATIONS[version:]:
            migrate(conn)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        roll_back(conn)
        raise
