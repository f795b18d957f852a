"""Where askbridge keeps its state, and the lock that gives one process sole use of it.

`resolve_data_dir(args.data_dir)` turns the `--data-dir` flag into a path
(protocol.md "Command line"); `open_store(path)` creates the directory if
needed, takes its lock and opens `askbridge.db` in it. Closing the store
releases the lock.

The lock is `fcntl.flock` on `askbridge.lock`. The kernel drops it when the
holder's file is closed or the process dies (even by `kill -9`), so a stale
lock file never blocks anyone. The holder writes its pid and command line
into the file, so a second process opening the same directory can say who
has it instead of corrupting the database:
`data directory /x is in use by process 1234 (askbridge serve --stdio)`.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from pathlib import Path
from types import TracebackType

from .store_api import StoreError
from .store_sqlite import SQLiteEventStore

DB_FILE_NAME = "askbridge.db"
LOCK_FILE_NAME = "askbridge.lock"

# The holder writes its pid just after taking the lock; a loser reading in that
# instant sees an empty file, so it looks again briefly before giving up on the name.
_HOLDER_READ_ATTEMPTS = 5
_HOLDER_READ_PAUSE_S = 0.02
_MAX_COMMAND_CHARS = 200


def resolve_data_dir(arg: str | None) -> Path:
    """`--data-dir` if given, else `$XDG_STATE_HOME/askbridge`, else `~/.local/state/askbridge`."""
    if arg:
        return Path(arg).expanduser().absolute()
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if state_home and os.path.isabs(state_home):
        return Path(state_home) / "askbridge"
    return Path.home() / ".local" / "state" / "askbridge"


class DataDirLock:
    """Exclusive use of a data directory by this process (see the module docstring)."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / LOCK_FILE_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, or raise StoreError naming the process that holds it."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot create lock file {self.path}: {exc.strerror}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise StoreError(f"data directory {self.data_dir} is in use by {holder}") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {self.path}: {exc.strerror}") from exc
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n{_command_line()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Give the lock up; safe to call when not held."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            # Clear our name first, so nobody reads a pid that no longer holds it.
            os.ftruncate(fd, 0)
        finally:
            os.close(fd)  # closing the only descriptor drops the flock

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


def open_store(data_dir: Path | str) -> SQLiteEventStore:
    """Lock `data_dir` (creating it) and open its `askbridge.db`; `close()` unlocks."""
    data_dir = Path(data_dir)
    try:
        data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    except OSError as exc:
        raise StoreError(f"cannot create data directory {data_dir}: {exc.strerror}") from exc
    lock = DataDirLock(data_dir)
    lock.acquire()
    try:
        return SQLiteEventStore(data_dir / DB_FILE_NAME, on_close=lock.release)
    except BaseException:
        lock.release()
        raise


def _command_line() -> str:
    """How a person would recognise this process: `askbridge serve --stdio`, not a venv path."""
    argv = list(sys.argv)
    program = os.path.basename(argv[0]) if argv and argv[0] else ""
    if not program or program == "-c" or program.endswith(".py"):
        # `python -c …`, `python -m …` or `python script.py`: name the interpreter too.
        words = [os.path.basename(sys.executable), *argv]
    else:
        words = [program, *argv[1:]]
    text = " ".join(words).replace("\n", " ")
    return text if len(text) <= _MAX_COMMAND_CHARS else text[: _MAX_COMMAND_CHARS - 1] + "…"


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
