"""Files of a private data directory (S5): the directory 0700 and only its owner's,
every file askbridge makes in it 0600, none opened through a symbolic link.

- `make_private_dir(d)` creates `d` 0700 (its missing parents as the umask says)
  or checks the existing one with `check_private_dir(d)`: a directory of
  another user, or one that group or others may write, is refused with one
  line saying why. One that others may only read is used as it is. `d` itself
  may be a symbolic link; the checks apply to the directory it names.
- `open_private_file(path, what)` opens or creates a regular file of ours
  0600 with `O_NOFOLLOW`: a planted link is refused and its target never
  opened, created or truncated; a file of another user, or with other hard
  links, is refused too. An older askbridge's looser mode is tightened.
  `open_private_fd` is the same for a file outside the data directory (a
  `--log-file`, S15), whose refusals are OSErrors as the system's are.
- `check_db_companions(db)` does the same by `lstat` for SQLite's `-wal` and
  `-shm`, which SQLite opens by name (they get the database file's mode when
  SQLite creates them, so creating the database 0600 first is enough).

Check-then-open by name is safe here because only the owner can write in a
directory that passed `check_private_dir`. Every failure is a StoreError.

Only `os` and `stat` are imported (both loaded with the interpreter), and
`askbridge.process.paths` (the same, and `errno`), whose rules for the directory a front
door checks too (S13): an inline host runs these checks before it answers
`initialize` (lsp/early.py), and `pathlib` or the error taxonomy (`enum`, `typing`,
`dataclasses`) would cost more than the interpreter's own start. Paths are
`str` or `os.PathLike`; the StoreError classes are imported only when one is raised
(`refusal`, `damage`).
"""

from __future__ import annotations

import os
import stat

from askbridge.process import paths

TYPE_CHECKING = False  # not `typing`'s: see the module docstring (mypy knows the name)
if TYPE_CHECKING:
    from askbridge.core.errors import StoreDamaged, StoreError

    Where = str | os.PathLike[str]

DB_COMPANION_SUFFIXES = ("-wal", "-shm")


def refusal(message: str) -> StoreError:
    """A StoreError (STORE_ERROR), its class loaded only now: a start that passes every
    check never imports the error taxonomy before its answer."""
    from askbridge.core.errors import StoreError

    return StoreError(message)


def damage(message: str) -> StoreDamaged:
    """A StoreDamaged (STORE_DAMAGED, S6), loaded as `refusal` is."""
    from askbridge.core.errors import StoreDamaged

    return StoreDamaged(message)


def make_private_dir(data_dir: Where) -> None:
    """Create `data_dir` 0700 (and its missing parents), or check the existing one (S5)."""
    problem = paths.make_private_dir(data_dir)
    if problem is not None:
        raise refusal(problem)


def check_private_dir(data_dir: Where) -> None:
    """StoreError unless `data_dir` is a directory of this user that only this user may write."""
    problem = paths.private_dir_problem(data_dir)
    if problem is not None:
        raise refusal(problem)


def open_private_file(path: Where, what: str, flags: int = 0) -> int:
    """Open (creating 0600) a regular file of ours, never through a symbolic link."""
    try:
        return open_private_fd(path, flags)
    except NotPrivateFile as exc:
        raise refusal(f"{what} {path} {exc.reason}") from None
    except OSError as exc:
        raise refusal(f"cannot open {what} {path}: {exc.strerror}") from exc


class NotPrivateFile(OSError):
    """A file that is there but not ours to use; `reason` says why, after its name."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"it {reason}")
        self.reason = reason
        self.strerror = f"it {reason}"  # what a caller that reads OSError's words shows


def open_private_fd(path: Where, flags: int = 0) -> int:
    """`open_private_file` for callers outside the store (a `--log-file`, S15), with
    `flags` added to O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC: NotPrivateFile for a file
    that is not ours to use, the system's OSError for one it cannot open."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | flags, 0o600)
    except OSError:
        if os.path.islink(path):
            raise NotPrivateFile("is a symbolic link; askbridge never follows one") from None
        raise
    try:
        info = os.fstat(fd)
        problem = _foreign_file_problem(info)
        if problem is None and stat.S_IMODE(info.st_mode) != 0o600:
            os.fchmod(fd, 0o600)  # made by an older askbridge under a looser umask
    except OSError:
        os.close(fd)
        raise
    if problem is not None:
        os.close(fd)
        raise NotPrivateFile(f"{problem}; askbridge does not use it")
    return fd


def _foreign_file_problem(info: os.stat_result) -> str | None:
    if not stat.S_ISREG(info.st_mode):
        return "is not a regular file"
    if info.st_uid != os.geteuid():
        return f"belongs to uid {info.st_uid}"
    if info.st_nlink != 1:
        return "has other hard links"
    return None


def check_db_companions(db_path: Where, *, tighten: bool = True) -> None:
    """`-wal`/`-shm`, when present, must be plain files of ours; made 0600 if `tighten`."""
    for suffix in DB_COMPANION_SUFFIXES:
        check_existing_file(os.fspath(db_path) + suffix, "file", tighten=tighten)


def check_existing_file(path: Where, what: str, *, tighten: bool) -> bool:
    """False when `path` does not exist; StoreError unless it is a plain file of ours
    (by `lstat`: a link is refused, never followed). Made 0600 if `tighten`."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return False
    except OSError as exc:
        raise refusal(f"cannot use {what} {path}: {exc.strerror}") from exc
    if stat.S_ISLNK(info.st_mode):
        raise refusal(f"{what} {path} is a symbolic link; askbridge never follows one")
    problem = _foreign_file_problem(info)
    if problem is not None:
        raise refusal(f"{what} {path} {problem}; askbridge does not use it")
    if tighten and stat.S_IMODE(info.st_mode) != 0o600:
        try:
            os.chmod(path, 0o600)
        except OSError as exc:
            raise refusal(f"cannot make {what} {path} private: {exc.strerror}") from exc
    return True
