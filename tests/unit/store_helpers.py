"""Small pieces the store and data-directory tests share."""

from __future__ import annotations

import subprocess
from pathlib import Path

from askbridge.testing.wire import serve_command
from session_headers import header  # noqa: F401  (shared by the store tests)


def refused_start(data_dir: Path, door: str = "serve") -> str:
    """Start a real `askbridge serve` (or `acp`) on `data_dir`; it must exit 1 at once with
    one line on stderr and nothing on stdout. Returns that line without `askbridge: `."""
    command = [door if word == "serve" else word for word in serve_command(data_dir)]
    done = subprocess.run(command, input=b"", capture_output=True, timeout=60, check=False)
    assert done.returncode == 1, done
    assert done.stdout == b""
    err = done.stderr.decode()
    assert err.count("\n") == 1 and err.startswith("askbridge: "), err
    return err.removeprefix("askbridge: ").strip()
