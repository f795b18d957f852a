"""The first check of `--data-dir`, before any command touches it (S5). Stdlib only:
the editors' attach path (entry.py) runs it too, and must start fast.

A `--data-dir` that exists but is not a directory would otherwise fail far
inside each command with `[Errno 20] Not a directory` and no path (the doors) or a
traceback (`host`, `host --status`, `host --stop`, connecting to
`DIR/host.sock`). Every command that takes `--data-dir` asks this first and
prints its one line instead.
"""

from __future__ import annotations

import errno
import os
import stat


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
