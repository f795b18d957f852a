"""Where a data directory is, from `--data-dir` and the environment.

Standard library only, and importing nothing of ours, so both the fast front-door
path (attach.py) and the host's store (host/store/datadir.py) read the same rules
without the store depending on the front door (tests/unit/test_layers.py): where the
directory is, and whether it is private enough to use (S5, S13).
"""

from __future__ import annotations

import errno
import os
import stat


def data_dir_of(arg: str | None) -> str:
    """`--data-dir` if given, else `$XDG_STATE_HOME/askbridge`, else `~/.local/state/askbridge`."""
    if arg:
        return os.path.abspath(os.path.expanduser(arg))
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if state_home and os.path.isabs(state_home):
        return os.path.join(state_home, "askbridge")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "askbridge")


# S5: the first check of `--data-dir`, before any command touches it. A `--data-dir` that
# exists but is not a directory would otherwise fail far inside each command with
# `[Errno 20] Not a directory` and no path, or a traceback; every command asks this first.
def data_dir_problem(data_dir: str) -> str | None:
    """One line when `data_dir` exists and is not a directory (or sits under a file)."""
    try:
        info = os.stat(data_dir)
    except FileNotFoundError:
        return None  # created when first used
    except OSError as exc:
        if exc.errno == errno.ENOTDIR:
            return f"data directory {data_dir} cannot be created: {_file_above(data_dir)}"
        return None  # the command's own checks say what is wrong (permissions, …)
    if not stat.S_ISDIR(info.st_mode):
        return f"data directory {data_dir} exists and is not a directory"
    return None


def _file_above(data_dir: str) -> str:
    """Which part of the path is a file, for `--data-dir FILE/sub`."""
    parent = os.path.dirname(os.path.abspath(data_dir))
    while parent and parent != os.path.dirname(parent):
        if os.path.exists(parent) and not os.path.isdir(parent):
            return f"{parent} is not a directory"
        parent = os.path.dirname(parent)
    return "a part of its path is not a directory"


def make_private_dir(data_dir: str | os.PathLike[str]) -> str | None:
    """Create `data_dir` 0700 (its missing parents as the umask says), or take the one
    there; either way, one line when it is not private (`private_dir_problem`)."""
    try:
        # As `Path(data_dir).parent.mkdir(parents=True, exist_ok=True)`: "" is the cwd.
        parent = os.path.dirname(os.fspath(data_dir).rstrip(os.sep))
        if parent:
            os.makedirs(parent, exist_ok=True)
        os.mkdir(data_dir, 0o700)
        os.chmod(data_dir, 0o700)  # mkdir's mode is filtered by the umask
    except FileExistsError:
        pass  # made before, maybe by someone else a moment ago: judged below all the same
    except OSError as exc:
        return f"cannot create data directory {data_dir}: {exc.strerror}"
    return private_dir_problem(data_dir)


def private_dir_problem(
    data_dir: str | os.PathLike[str], *, missing_ok: bool = False
) -> str | None:
    """One line when `data_dir` is not a directory of this user that only this user may
    write (S5: the host refuses it; S13: a front door trusts no host behind it); None
    when it is, or (`missing_ok`) when there is none yet. A symbolic link is judged by
    the directory it names."""
    try:
        info = os.stat(data_dir)
    except FileNotFoundError:
        return None if missing_ok else f"no data directory at {data_dir}"
    except OSError as exc:
        return f"cannot use data directory {data_dir}: {exc.strerror}"
    if not stat.S_ISDIR(info.st_mode):
        return f"cannot create data directory {data_dir}: it is not a directory"
    if info.st_uid != os.geteuid():
        return (
            f"data directory {data_dir} belongs to uid {info.st_uid}, not to this user "
            f"(uid {os.geteuid()}); askbridge uses only a directory of its own user"
        )
    if info.st_mode & 0o022:
        return (
            f"data directory {data_dir} is writable by group or others "
            f"(mode {stat.S_IMODE(info.st_mode):o}); run `chmod 700 {data_dir}` to use it"
        )
    return None
