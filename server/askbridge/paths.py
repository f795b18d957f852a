"""Where a data directory is, from `--data-dir` and the environment.

Standard library only, and importing nothing of ours, so both the fast front-door
path (attach.py) and the host's store (host/store/datadir.py) read the same rule
without the store depending on the front door (tests/unit/test_layers.py).
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
