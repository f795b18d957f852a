"""Where a command's logs go: `--log-file`, else stderr; never stdout (protocol frames only).

Its own module, apart from the parser (cli/parser.py), so that the console script's
plain `--host inline` command line (cli/entry.py) sets its logs up without building one.
"""

from __future__ import annotations

import logging
import os
import sys


def setup_logging(log_file: str | None = None, level: str = "WARNING") -> None:
    """Logs to `log_file` or stderr at `level`; OSError when the file cannot be opened.
    A loop's lines are written in its next turn (log_lines.py), and before a traceback.

    S15: `log_file` is this user's alone, as the data directory's files are: created 0600
    whatever the umask (at DEBUG it holds question text), opened for appending without
    following a symbolic link, and refused (an OSError saying why) when it is another
    user's file, not a regular file, or one with other hard links."""
    from askbridge.process.log_lines import LineHandler, flush_before_crash_reports, lean_records

    if log_file:
        from askbridge.host.store.private_files import open_private_fd

        fd = open_private_fd(log_file, os.O_APPEND)
        handler = LineHandler(open(fd, "a", encoding="utf-8"), owned=True)
    else:
        handler = LineHandler(sys.stderr)
    lean_records()  # S12's lines, cheaply
    flush_before_crash_reports()
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
