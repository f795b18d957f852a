"""What the attack tests share: another local user (nobody, through `setpriv`), a folder
everyone may write in as /tmp is, the console script a victim runs, and the MCP door's
opening line. CI runs as root, which may become any user."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

NOBODY = 65534
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
ASKBRIDGE = str(Path(sys.executable).with_name("askbridge"))  # the console script users run
MCP_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder everyone may write in, as /tmp (sticky), of this test alone."""
    base = Path(tempfile.mkdtemp(prefix="abt-", dir="/tmp"))
    os.chmod(base, 0o1777)
    yield base
    shutil.rmtree(base, ignore_errors=True)
