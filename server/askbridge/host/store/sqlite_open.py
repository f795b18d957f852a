"""Opening `askbridge.db` and the checks at open (S6).

An inline host opens its store before it answers `initialize` (lsp/early.py), so
everything a start on an existing, current store runs is here, importing `os` and
`sqlite3` only (`sqlite3` and its `datetime` cost ~2 ms of a start; sqlite_schema.py's
migrations bring `json`, only for a new or older store). The connection made here is
the store's (store_sqlite.py). The schema's history, a migration and the read-only
fallback are sqlite_schema.py's.

- `check_length(path)`: StoreDamaged when the file is shorter than its own header says
  (checked before opening, when no WAL holds newer pages; a 0-byte file is a new,
  empty store, as SQLite itself sees it).
- `open_current(path, ...)`: the write connection, its schema current: checked, and
  migrated by the caller's `migrate` (sqlite_schema.py's) only for a new or older file.
- `open_file(...)`: a configured connection and its schema version, refusing a file
  that is not ours, from a newer askbridge, or one that lost its tables (S6).
- `store_error(...)`: an `sqlite3.Error` as the StoreError a caller gets.
"""

from __future__ import annotations

import os
import sqlite3

from .private_files import damage, refusal
from .store_identity import lost_message

TYPE_CHECKING = False  # not `typing`'s (private_files.py; mypy knows the name)
if TYPE_CHECKING:
    from collections.abc import Callable

    from askbridge.core.errors import StoreError

    from .private_files import Where

# sqlite_schema.MIGRATIONS has this many entries (tests/unit/test_store_start.py checks it):
# bump it when a migration is appended there.
SCHEMA_VERSION = 3

# SQLite's words for "these bytes are not a (healthy) database".
_DAMAGED = {"SQLITE_NOTADB", "SQLITE_CORRUPT"}


def store_error(path: Where, exc: sqlite3.Error, action: str, context: str = "") -> StoreError:
    """`exc` as the StoreError a caller gets: StoreDamaged when SQLite says the file is bad."""
    if getattr(exc, "sqlite_errorname", "") in _DAMAGED:
        return damage(f"{path} is damaged or not an SQLite database ({exc}){context}")
    return refusal(f"cannot {action} the event store {path}: {exc}{context}")


def open_current(
    path: Where, *, require_schema: bool, migrate: Callable[[sqlite3.Connection, Where], None]
) -> sqlite3.Connection:
    """The write connection to `path`: length checked, configured, its schema version
    checked and, when it is not the current one, brought there by `migrate`."""
    check_length(path)
    try:
        conn, version = open_file(
            path, os.fspath(path), read_only=False, require_schema=require_schema
        )
        if version != SCHEMA_VERSION:
            try:
                migrate(conn, path)
            except BaseException:
                conn.close()
                raise
    except sqlite3.Error as exc:
        raise store_error(path, exc, "open") from exc
    return conn


def open_file(
    path: Where, target: str, *, read_only: bool, require_schema: bool, uri: bool = False
) -> tuple[sqlite3.Connection, int]:
    """A connection to `target` (`path`, or its `file:` URI when `uri`), configured, and
    its schema version, checked (`check_version`). SQLite's own errors are the caller's."""
    conn = sqlite3.connect(target, uri=uri, isolation_level=None, check_same_thread=False)
    try:
        _configure(conn, path, read_only)
        version = check_version(conn, path, read_only, require_schema)
    except BaseException:
        conn.close()
        raise
    return conn, version


def check_length(path: Where) -> None:
    """StoreDamaged when the file is shorter than its own header says (S6).

    Only while no WAL exists: a WAL may hold pages the file does not have yet.
    Anything that is not an SQLite header is left for SQLite to call NOTADB.
    """
    try:
        if os.path.exists(os.fspath(path) + "-wal"):
            return
        with open(path, "rb") as file:
            header = file.read(100)
            length = os.fstat(file.fileno()).st_size
    except FileNotFoundError:
        return
    except OSError as exc:
        raise refusal(f"cannot read the event store {path}: {exc.strerror}") from exc
    if len(header) < 100 or not header.startswith(b"SQLite format 3\0"):
        return
    page_size = int.from_bytes(header[16:18], "big")
    expected = (65536 if page_size == 1 else page_size) * int.from_bytes(header[28:32], "big")
    # The header's page count is valid only while the change counter matches its stamp.
    if header[24:28] == header[92:96] and length < expected:
        raise damage(
            f"{path} is damaged: it has {length} bytes where its header says {expected} "
            "(a truncated copy?)"
        )


def _configure(conn: sqlite3.Connection, path: Where, read_only: bool) -> None:
    if read_only:
        conn.execute("PRAGMA query_only = ON")
    else:
        (mode,) = conn.execute("PRAGMA journal_mode = WAL").fetchone()
        if str(mode).lower() != "wal":
            raise refusal(f"{path}: SQLite refused WAL journaling here (got {mode!r})")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    # Only matters beside another connection (a reader, or something that bypassed
    # the data dir lock); then wait, don't fail at once.
    conn.execute("PRAGMA busy_timeout = 5000")


def read_version(conn: sqlite3.Connection, path: Where) -> int:
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return 0
    if "schema_version" not in tables:
        raise refusal(f"{path} is an SQLite file but not an askbridge database")
    rows = conn.execute("SELECT version FROM schema_version").fetchall()
    if len(rows) != 1 or not isinstance(rows[0][0], int) or rows[0][0] < 1:
        raise damage(f"{path} is damaged: unreadable schema version {rows!r}")
    version: int = rows[0][0]
    return version


def check_version(
    conn: sqlite3.Connection, path: Where, read_only: bool, require_schema: bool
) -> int:
    """The file's schema version, when this askbridge may use it as it is or migrate it.

    `require_schema`: the directory had a store (store_identity.py), so an SQLite file
    without askbridge's tables is a lost store, not a new one.
    """
    version = read_version(conn, path)
    if version == SCHEMA_VERSION:
        return version
    if version == 0 and require_schema:
        directory = os.path.dirname(os.fspath(path)) or "."
        raise refusal(lost_message(directory, path, "holds no askbridge data"))
    if version > SCHEMA_VERSION:
        raise refusal(
            f"{path} has schema version {version}, newer than this askbridge "
            f"understands ({SCHEMA_VERSION}); upgrade askbridge or use another --data-dir"
        )
    if read_only:
        raise refusal(
            f"{path} has schema version {version}; start askbridge on it once "
            f"to bring it to version {SCHEMA_VERSION}"
        )
    return version
