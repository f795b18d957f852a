"""Where askbridge keeps its state, kept private (S5), and the lock that gives one process
sole use of it.

`resolve_data_dir(args.data_dir)` turns the `--data-dir` flag into a path
(protocol.md "Command line"); `open_store(path)` makes the directory private
(or refuses it), takes its lock and opens `askbridge.db` in it. Closing the
store releases the lock. `open_checked(path)` does all of that but build the
store: an inline host holds and checks its directory before it answers
`initialize` and builds the store after (`CheckedStore.store()`), so this module
imports only `os`, `fcntl`, `sys`, `time` and the os-level modules below it
(private_files.py says why); `pathlib`, `dataclasses`, `json` and the rest of the
store load with `store()`. `open_store_read_only(path)` reads a directory some
server may be using, without locking or creating anything (`askbridge sessions`).

Privacy (S5, private_files.py). A new data directory is created 0700 and every
file askbridge puts in it 0600: the lock and `askbridge.db`, which is created
here before SQLite opens it because SQLite gives `-wal` and `-shm` the database
file's mode. An existing directory of another user, or one that group or
others may write, is refused with one line saying why. The lock and the
database are never opened through a symbolic link; a planted link's target is
never opened, let alone truncated.

The lock is `fcntl.flock` on `askbridge.lock`. The kernel drops it when the
holder's file is closed or the process dies (even by `kill -9`), so a stale
lock file never blocks anyone. The holder writes its pid and command line into
the file, so a second process can say who has it instead of corrupting the
database: `data directory /x is in use by process 1234 (askbridge serve --stdio)`.

A lock file can be deleted with its directory; the directory guard
(datadir_guard.py) cannot, so a second process is refused on a re-created
directory while the first one still holds its (now unreachable) files.

Lost database (S6, store_identity.py). `askbridge.store`, written once when the
store is created, says the directory had a store: a database that is then missing,
empty or without askbridge's tables is refused at start, not opened as a new one.

Lost directory (S5). `DataDirLock.check()` runs before every commit (the store
calls it inside the write transaction, one `lstat`): when `askbridge.lock` is
no longer the very file this process locked — the directory was deleted,
moved or replaced — it raises StoreLost, and from then on every check does,
even if the old directory comes back: the store stops acknowledging writes.
Telling the clients and exiting is the host's part.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from askbridge.process.paths import data_dir_of

from .datadir_guard import DirectoryGuard, DirectoryTaken, shorten_command
from .private_files import (
    check_db_companions,
    check_existing_file,
    check_private_dir,
    make_private_dir,
    open_private_file,
    refusal,
)
from .sqlite_open import open_current
from .store_identity import had_store, refuse_lost_database, write_identity

TYPE_CHECKING = False  # not `typing`'s (private_files.py; mypy knows the name)
if TYPE_CHECKING:
    from pathlib import Path
    from sqlite3 import Connection
    from types import TracebackType

    from .private_files import Where
    from .store_sqlite import SQLiteEventStore

DB_FILE_NAME = "askbridge.db"
LOCK_FILE_NAME = "askbridge.lock"

# The holder writes its pid just after taking the lock; a loser reading in that
# instant sees an empty file, so it looks again briefly before giving up on the name.
_HOLDER_READ_ATTEMPTS = 5
_HOLDER_READ_PAUSE_S = 0.02


def resolve_data_dir(arg: str | None) -> Path:
    """`--data-dir` if given, else `$XDG_STATE_HOME/askbridge`, else `~/.local/state/askbridge`."""
    from pathlib import Path  # not at the top: see the module docstring

    return Path(data_dir_of(arg))


class DataDirLock:
    """Exclusive use of a data directory by this process (see the module docstring)."""

    def __init__(self, data_dir: Where) -> None:
        self.data_dir = os.fspath(data_dir)
        self.path = os.path.join(self.data_dir, LOCK_FILE_NAME)
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._guard: DirectoryGuard | None = None
        self._lost: str | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, or raise StoreError naming the process that holds it."""
        if self._fd is not None:
            return
        fd = open_private_file(self.path, "lock file")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise refusal(f"data directory {self.data_dir} is in use by {holder}") from None
        except OSError as exc:
            os.close(fd)
            raise refusal(f"cannot lock {self.path}: {exc.strerror}") from exc
        try:
            self._guard = DirectoryGuard.claim(self.data_dir)
        except DirectoryTaken as taken:
            os.close(fd)
            raise refusal(taken.describe(self.data_dir)) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{_command_line()}\n".encode(), 0)
            info = os.fstat(fd)
        except BaseException as exc:
            os.close(fd)
            self._release_guard()
            if isinstance(exc, OSError):
                raise refusal(f"cannot write lock file {self.path}: {exc.strerror}") from exc
            raise
        self._fd, self._identity, self._lost = fd, (info.st_dev, info.st_ino), None

    def check(self) -> None:
        """StoreLost unless `askbridge.lock` is still the file we locked (S5; sticky)."""
        if self._lost is None and self._identity is not None:
            try:
                info = os.lstat(self.path)
                same = (info.st_dev, info.st_ino) == self._identity
            except OSError:
                same = False
            if not same:
                self._lost = (
                    f"data directory {self.data_dir} was deleted or replaced while in use "
                    f"({self.path} is no longer the file this process locked); "
                    "nothing more is written"
                )
        if self._lost is not None:
            from askbridge.core.errors import StoreLost  # loaded once lost, not at start

            raise StoreLost(self._lost)

    def release(self) -> None:
        """Give the lock up; safe to call when not held."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Clear our name first, so nobody reads a pid that no longer holds it. The
            # descriptor is the file we locked, wherever it went: never someone else's.
            # Best effort: on a disk gone read-only closing must still work.
            os.ftruncate(fd, 0)
        except OSError:
            pass
        finally:
            os.close(fd)  # closing the only descriptor drops the flock
            self._release_guard()

    def _release_guard(self) -> None:
        guard, self._guard = self._guard, None
        if guard is not None:
            guard.release()

    def __enter__(self) -> DataDirLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


class CheckedStore:
    """A data directory held (its lock and guard) and checked (S5, S6), with its database
    open and current: all that `open_store` does but build the store (`store()`)."""

    __slots__ = ("_conn", "_lock", "db_path")

    def __init__(self, db_path: str, conn: Connection, lock: DataDirLock) -> None:
        self.db_path, self._conn, self._lock = db_path, conn, lock

    def store(self) -> SQLiteEventStore:
        """The store on this connection; its `close()` releases the lock."""
        from .store_sqlite import SQLiteEventStore

        lock = self._lock
        return SQLiteEventStore(
            self.db_path, connection=self._conn, on_close=lock.release, check_lost=lock.check
        )

    def close(self) -> None:
        """Give it up without building the store (a start refused after this, H1)."""
        try:
            self._conn.close()
        finally:
            self._lock.release()


def open_checked(data_dir: Where) -> CheckedStore:
    """Lock `data_dir` (creating it), check it and open its `askbridge.db` (S5, S6)."""
    data_dir = os.fspath(data_dir)
    make_private_dir(data_dir)
    lock = DataDirLock(data_dir)
    lock.acquire()
    try:
        db_path = os.path.join(data_dir, DB_FILE_NAME)
        # S6: a directory that had a store must still have its database (store_identity.py).
        refuse_lost_database(data_dir, db_path)
        existed = had_store(data_dir)
        # Created (or checked) here so SQLite never opens a planted link and its
        # -wal/-shm inherit 0600. Closed before SQLite opens it: closing any descriptor
        # of a file drops this process's POSIX locks on it, SQLite's included.
        os.close(open_private_file(db_path, "database"))
        check_db_companions(db_path)
        conn = open_current(db_path, require_schema=existed, migrate=_migrate)
        if not existed:
            try:
                write_identity(data_dir)  # once the schema is committed: now it is a store
            except BaseException:
                conn.close()
                raise
        return CheckedStore(db_path, conn, lock)
    except BaseException:
        lock.release()
        raise


def _migrate(conn: Connection, db_path: Where) -> None:
    # Only a new or older file needs the migrations (and their `json`): not at the top.
    from .sqlite_schema import migrate

    migrate(conn, db_path)


def open_store(data_dir: Where) -> SQLiteEventStore:
    """Lock `data_dir` (creating it) and open its `askbridge.db`; `close()` unlocks."""
    checked = open_checked(data_dir)
    try:
        return checked.store()
    except BaseException:
        checked.close()
        raise


def open_store_read_only(data_dir: Where) -> SQLiteEventStore:
    """The store of `data_dir`, read-only: no lock, nothing created; a server may be running."""
    from .store_sqlite import SQLiteEventStore

    check_private_dir(data_dir)
    db_path = os.path.join(data_dir, DB_FILE_NAME)
    if not check_existing_file(db_path, "database", tighten=False):
        raise refusal(f"no askbridge database in {data_dir}")
    check_db_companions(db_path, tighten=False)
    return SQLiteEventStore.open_read_only(db_path)


def _command_line() -> str:
    """How a person would recognise this process: `askbridge serve --stdio`, not a venv path."""
    argv = list(sys.argv)
    program = os.path.basename(argv[0]) if argv and argv[0] else ""
    if not program or program == "-c" or program.endswith(".py"):
        # `python -c …`, `python -m …` or `python script.py`: name the interpreter too.
        words = [os.path.basename(sys.executable), *argv]
    else:
        words = [program, *argv[1:]]
    return shorten_command(words)


def _read_holder(fd: int) -> str:
    """`process 1234 (askbridge serve)` from the lock file, or a vaguer phrase."""
    for attempt in range(_HOLDER_READ_ATTEMPTS):
        if attempt:
            time.sleep(_HOLDER_READ_PAUSE_S)
        text = os.pread(fd, 4096, 0).decode(errors="replace")
        pid, _, command = text.partition("\n")
        if pid.strip().isdigit():
            command = command.strip()
            return f"process {pid.strip()} ({command})" if command else f"process {pid.strip()}"
    return "another process"
