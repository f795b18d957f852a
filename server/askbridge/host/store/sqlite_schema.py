"""The SQLite file under the event store: its schema and migrations, and opening it
(store_sqlite.py builds the EventStore on the connection `open_connection` returns).

The schema grows only through `MIGRATIONS`: entry i takes version i to i+1, so
a file from any older release is brought up to date on open. To change the
schema, append a function (and bump `sqlite_open.SCHEMA_VERSION`); never edit a
released one.

The checks at open are sqlite_open.py's, on SQLite's C module alone, so that an inline
host opens a current store before its first answer without importing this module.
Failures are StoreErrors naming the file: StoreDamaged (STORE_DAMAGED) for bytes
that are not SQLite, corrupt pages, or a file shorter than its own header says;
a plain StoreError for a file that is not ours or from a newer askbridge.
"""

from __future__ import annotations

import json
import os
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from .event_rows import columns
from .sqlite_open import (
    SCHEMA_VERSION,
    check_length,
    open_current,
    open_file,
    read_version,
    store_error,
)

TYPE_CHECKING = False  # as in sqlite_open.py
if TYPE_CHECKING:
    from .private_files import Where


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


def open_connection(
    path: Path, *, read_only: bool, require_schema: bool = False
) -> sqlite3.Connection:
    """A configured connection to `path`, its schema current (migrated unless `read_only`).

    `require_schema`: the directory had a store (store_identity.py), so an SQLite file
    without askbridge's tables is a lost store, not a new one.
    """
    if not read_only:
        return open_current(path, require_schema=require_schema, migrate=migrate)
    check_length(path)
    try:
        return _open_read_only(path, "ro", require_schema)
    except sqlite3.Error as exc:
        # Reading a WAL file needs its -shm, which a read-only filesystem (a mounted backup)
        # cannot give; with no -wal no connection is open anywhere, so the file is frozen.
        no_wal = not os.path.exists(path.with_name(path.name + "-wal"))
        if not (no_wal and exc.sqlite_errorname == "SQLITE_CANTOPEN"):
            raise store_error(path, exc, "open") from exc
    try:
        return _open_read_only(path, "ro&immutable=1", require_schema)
    except sqlite3.Error as exc:
        raise store_error(path, exc, "open") from exc


def _open_read_only(path: Path, mode: str, require_schema: bool) -> sqlite3.Connection:
    """Read-only never migrates: an older file is refused (sqlite_open.check_version)."""
    uri = f"file:{urllib.parse.quote(str(path.absolute()))}?mode={mode}"
    conn, _ = open_file(path, uri, read_only=True, require_schema=require_schema, uri=True)
    return conn


def roll_back(conn: sqlite3.Connection) -> None:
    """End the open transaction, if any; a failing ROLLBACK must not hide the first error."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass  # SQLite has undone what it could; the transaction's own error is raised


def migrate(conn: sqlite3.Connection, path: Where) -> None:
    """Bring the file from its version (checked: sqlite_open.check_version) to the current
    one, in one write transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Re-read under the write lock in case another opener migrated meanwhile.
        version = read_version(conn, path)
        for migrate_step in MIGRATIONS[version:]:
            migrate_step(conn)
        conn.execute("DELETE FROM schema_version")
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (SCHEMA_VERSION,))
        conn.execute("COMMIT")
    except BaseException:
        roll_back(conn)
        raise
