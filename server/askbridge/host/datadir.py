"""Where askbridge keeps its state, kept private (S5), and the lock that gives one process
sole use of it.

`resolve_data_dir(args.data_dir)` turns the `--data-dir` flag into a path
(protocol.md "Command line"); `open_store(path)` makes the directory private
(or refuses it), takes its lock and opens `askbridge.db` in it. Closing the
store releases the lock. `open_store_read_only(path)` reads a directory some
server may be using, without locking or creating anything (`askbridge sessions`).

Privacy (S5). A new data directory is created 0700 and every file askbridge
puts in it 0600: the lock, `askbridge.db` (created here, before SQLite opens
it, because SQLite gives `-wal` and `-shm` the database file's mode). An
existing directory that is not owned by this user, or that group or others may
write, is refused with one line saying why; one that others may merely read is
used as it is (the files in it are 0600). The data directory path itself may be
a symbolic link (the checks apply to the directory it names), but the lock and
the database are never opened through one: `O_NOFOLLOW` and `lstat` refuse a
planted link, and its target is never opened, let alone truncated. These
check-then-open steps are safe because only the owner can write in a directory
that passed the checks.

The lock is `fcntl.flock` on `askbridge.lock`. The kernel drops it when the
holder's file is closed or the process dies (even by `kill -9`), so a stale
lock file never blocks anyone. The holder writes its pid and command line into
the file, so a second process can say who has it instead of corrupting the
database: `data directory /x is in use by process 1234 (askbridge serve --stdio)`.

A lock file can be deleted with its directory; the directory guard
(datadir_guard.py) cannot, so a second process is refused on a re-created
directory while the first one still holds its (now unreachable) files.

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
import stat
import sys
import time
from pathlib import Path
from types import TracebackType

from .datadir_guard import DirectoryGuard, DirectoryTaken, shorten_command
from .store_api import StoreError, StoreLost
from .store_sqlite import SQLiteEventStore

DB_FILE_NAME = "askbridge.db"
LOCK_FILE_NAME = "askbridge.lock"
# SQLite's companions of the database file; they get its mode when SQLite creates them.
DB_COMPANION_SUFFIXES = ("-wal", "-shm")

# The holder writes its pid just after taking the lock; a loser reading in that
# instant sees an empty file, so it looks again briefly before giving up on the name.
_HOLDER_READ_ATTEMPTS = 5
_HOLDER_READ_PAUSE_S = 0.02


def resolve_data_dir(arg: str | None) -> Path:
    """`--data-dir` if given, else `$XDG_STATE_HOME/askbridge`, else `~/.local/state/askbridge`."""
    if arg:
        return Path(arg).expanduser().absolute()
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if state_home and os.path.isabs(state_home):
        return Path(state_home) / "askbridge"
    return Path.home() / ".local" / "state" / "askbridge"


def make_private_dir(data_dir: Path) -> None:
    """Create `data_dir` 0700 (and its missing parents), or check the existing one (S5)."""
    try:
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        os.mkdir(data_dir, 0o700)
        os.chmod(data_dir, 0o700)  # mkdir's mode is filtered by the umask
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot create data directory {data_dir}: {exc.strerror}") from exc
    check_private_dir(data_dir)


def check_private_dir(data_dir: Path) -> None:
    """StoreError unless `data_dir` is a directory of this user that only this user may write."""
    try:
        info = os.stat(data_dir)
    except FileNotFoundError:
        raise StoreError(f"no data directory at {data_dir}") from None
    except OSError as exc:
        raise StoreError(f"cannot use data directory {data_dir}: {exc.strerror}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise StoreError(f"cannot create data directory {data_dir}: it is not a directory")
    if info.st_uid != os.geteuid():
        raise StoreError(
            f"data directory {data_dir} belongs to uid {info.st_uid}, not to this user "
            f"(uid {os.geteuid()}); askbridge uses only a directory of its own user"
        )
    if info.st_mode & 0o022:
        raise StoreError(
            f"data directory {data_dir} is writable by group or others "
            f"(mode {stat.S_IMODE(info.st_mode):o}); run `chmod 700 {data_dir}` to use it"
        )


class DataDirLock:
    """Exclusive use of a data directory by this process (see the module docstring)."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILE_NAME
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
            raise StoreError(f"data directory {self.data_dir} is in use by {holder}") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from exc
        try:
            self._guard = DirectoryGuard.claim(self.data_dir)
        except DirectoryTaken as taken:
            os.close(fd)
            raise StoreError(taken.describe(self.data_dir)) from None
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n{_command_line()}\n".encode(), 0)
            info = os.fstat(fd)
        except BaseException as exc:
            os.close(fd)
            self._release_guard()
            if isinstance(exc, OSError):
                raise StoreError(f"cannot write lock file {self.path}: {exc.strerror}") from exc
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


def open_private_file(path: Path, what: str) -> int:
    """Open (creating 0600) a regular file of ours, never through a symbolic link."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        if os.path.islink(path):
            raise StoreError(
                f"{what} {path} is a symbolic link; askbridge never follows one"
            ) from None
        raise StoreError(f"cannot open {what} {path}: {exc.strerror}") from exc
    try:
        info = os.fstat(fd)
        problem = _foreign_file_problem(info)
        if problem is None and stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # made by an older askbridge under a looser umask
    except OSError as exc:
        os.close(fd)
        raise StoreError(f"cannot use {what} {path}: {exc.strerror}") from exc
    if problem is not None:
        os.close(fd)
        raise StoreError(f"{what} {path} {problem}; askbridge does not use it")
    return fd


def _foreign_file_problem(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"belongs to uid {info.st_uid}"
    if info.st_nlink != 1:
        return "has other hard links"
    return None


def _check_db_companions(db_path: Path) -> None:
    """`-wal`/`-shm`, when present, must be plain files of ours; made 0600 if they are not."""
    for suffix in DB_COMPANION_SUFFIXES:
        path = db_path.with_name(db_path.name + suffix)
        try:
            info = os.lstat(path)
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StoreError(f"cannot use {path}: {exc.strerror}") from exc
        if stat.S_ISLNK(info.st_mode):
            raise StoreError(f"{path} is a symbolic link; askbridge never follows one")
        problem = _foreign_file_problem(info)
        if problem is not None:
            raise StoreError(f"{path} {problem}; askbridge does not use it")
        if stat.S_IMODE(info.st_mode) != 0o600:
            os.chmod(path, 0o600)


def open_store(data_dir: Path | str) -> SQLiteEventStore:
    """Lock `data_dir` (creating it) and open its `askbridge.db`; `close()` unlocks."""
    data_dir = Path(data_dir)
    make_private_dir(data_dir)
    lock = DataDirLock(data_dir)
    lock.acquire()
    try:
        db_path = data_dir / DB_FILE_NAME
        # Created (or checked) here so SQLite never opens a planted link and its
        # -wal/-shm inherit 0600. Closed before SQLite opens it: closing any descriptor
        # of a file drops this process's POSIX locks on it, SQLite's included.
        os.close(open_private_file(db_path, "database"))
        _check_db_companions(db_path)
        return SQLiteEventStore(db_path, on_close=lock.release, before_commit=lock.check)
    except BaseException:
        lock.release()
        raise


def open_store_read_only(data_dir: Path | str) -> SQLiteEventStore:
    """The store of `data_dir`, read-only: no lock, nothing created; a server may be running."""
    data_dir = Path(data_dir)
    check_private_dir(data_dir)
    db_path = data_dir / DB_FILE_NAME
    try:
        info = os.lstat(db_path)
    except FileNotFoundError:
        raise StoreError(f"no askbridge database in {data_dir}") from None
    except OSError as exc:
        raise StoreError(f"cannot use {db_path}: {exc.strerror}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise StoreError(f"database {db_path} is a symbolic link; askbridge never follows one")
    _check_db_companions(db_path)
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
