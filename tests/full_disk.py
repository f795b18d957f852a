"""`fill(directory)`: make a (small, mounted) filesystem full, for the disk-full tests (S4).

Shared by tests/faults and tests/mcp (tests/ is on sys.path through its conftest).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path


def fill(directory: Path) -> Path:
    """Write a filler file until the filesystem has no room left, not even one byte."""
    filler = directory / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        for size in (65536, 4096, 1):
            try:
                while os.write(fd, b"\0" * size) == size:
                    pass
            except OSError as exc:
                assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    return filler
