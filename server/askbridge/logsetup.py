"""Where a command's logs go: `--log-file`, else stderr; never stdout (protocol frames only).

Its own module, apart from the parser (cli_parser.py), so that the console script's
plain `--host inline` command line (entry.py) sets its logs up without building one.
"""

from __future__ import annotations

import logging
import sys


def setup_logging(log_file: str | None = None, level: str = "WARNING") -> None:
    """Logs to `log_file` or stderr at `level`; OSError when the file cannot be opened."""
    handler: logging.Handler
    if log_file:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    from askbridge.log_lines import LineFormatter, lean_records  # S12's lines, cheaply

    lean_records()
    handler.setFormatter(LineFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
