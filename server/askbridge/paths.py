"""Where a data directory is, from `--data-dir` and the environment.

Standard library only, and importing nothing of ours, so both the fast front-door
path (attach.py) and the host's store (host/store/datadir.py) read the same rule
without the store depending on the front door (tests/unit/test_layers.py).
"""

from __future__ import annotations

import os


def data_dir_of(arg: str | None) -> str:
    """`--data-dir` if given, else `$XDG_STATE_HOME/askbridge`, else `~/.local/state/askbridge`."""
    if arg:
        return os.path.abspath(os.path.expanduser(arg))
    state_home = os.environ.get("XDG_STATE_HOME", "")
    # The XDG spec says a relative value is invalid and must be ignored.
    if state_home and os.path.isabs(state_home):
        return os.path.join(state_home, "askbridge")
    return os.path.join(os.path.expanduser("~"), ".local", "state", "askbridge")
