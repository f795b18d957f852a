"""Starting `askbridge serve` for a test client, and saying why it did not start.

`follow_stderr` copies the server's stderr line by line to ours (unless told
not to) and keeps its last `STDERR_TAIL_LINES` lines; `ServerStartError` is what
`AskbridgeClient.connect` raises when the server exits, or stays silent, before
answering `initialize`: its message names the exit status and that tail, so a
harness test that fails at start-up says why without a second run.
"""

from __future__ import annotations

import asyncio
import sys
from collections import deque
from collections.abc import Sequence

import anyio

STDERR_TAIL_LINES = 20
DEFAULT_PROMPT_TIMEOUT_S = 60.0


class ServerStartError(RuntimeError):
    """`askbridge serve` exited (or stayed silent) before it answered `initialize`."""

    def __init__(self, status: int | None, stderr_tail: Sequence[str], reason: str = "") -> None:
        self.status, self.stderr_tail = status, list(stderr_tail)
        what = reason or f"askbridge serve exited with status {status} before answering initialize"
        if self.stderr_tail:
            what += "; the last lines of its stderr:" + "".join(f"\n  {t}" for t in stderr_tail)
        else:
            what += " (its stderr was empty)"
        super().__init__(what)


async def follow_stderr(
    process: asyncio.subprocess.Process, tail: deque[str], echo: bool, done: anyio.Event
) -> None:
    """Read the server's stderr to its end into `tail` (and ours when `echo`); then `done`."""
    assert process.stderr is not None
    try:
        while line := await process.stderr.readline():
            text = line.decode("utf-8", "replace").rstrip("\n")
            tail.append(text)
            if echo:
                print(text, file=sys.stderr, flush=True)
    finally:
        done.set()
