"""`askbridge demo`: the Quick start's guided session, in the terminal.

`run_demo(auto, data_dir)` starts a real `askbridge serve` subprocess with the
built-in script model (`script.json`, guided by `guide.json`) and walks the
person through answering its questions: options, multi-select with their own
text, a timed question claimed while typing, and one left to time out and
answered late, which wakes the agent into a new turn. `auto=True` plays the
same session by itself (no stdin needed). Without `data_dir` the session lives
in a fresh temporary directory that is removed at the end (the outro says so
and how to keep one); with it, the directory is kept. Returns the process exit
status: 0, 1 when the server failed or did something else (one line says
what), 130 when the person quit.

Modules: `session` (the run), `terminal` (cards, `--auto`), `interactive`
(the prompt_toolkit prompts), `transcript`
(printing what the server sends), `waitclock` (countdown and claims),
`reading` (one question shown and its answer read), `answers` (typed text →
answer items), `guide` (the JSON data), `story`
(what happened, for the outro).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import anyio
from rich.console import Console

from askbridge.process.log_lines import LineFormatter, escaped
from askbridge.testing import ServerStartError

from .guide import load_guide, load_script
from .session import DemoSession
from .terminal import AutoPlayer, Player
from .transcript import Transcript


def run_demo(auto: bool, data_dir: str | None) -> int:
    console = Console(highlight=False)
    if not auto and not sys.stdin.isatty():
        console.print("stdin is not a terminal, so the demo answers by itself (as with --auto).")
        auto = True
    if data_dir:
        path = Path(data_dir)
        note = f"The session's event log stays in {path}."
    else:
        path = Path(tempfile.mkdtemp(prefix="askbridge-demo-"))
        note = (
            "The session lived in a temporary directory, removed now; "
            "`askbridge demo --data-dir DIR` keeps it."
        )
    try:
        return _run_in(console, auto, path, note)
    finally:
        logging.shutdown()
        if not data_dir:
            shutil.rmtree(path, ignore_errors=True)


def _run_in(console: Console, auto: bool, path: Path, note: str) -> int:
    try:
        log_file = _private_dir(path)
    except OSError as exc:
        print(f"askbridge demo: cannot use --data-dir {path}: {exc.strerror}", file=sys.stderr)
        return 1
    # The client's own log lines go to the server's host.log, in its format (S12): the
    # terminal is the UI, and one file tells the whole story.
    handler = logging.StreamHandler(log_file)
    handler.setFormatter(LineFormatter())
    logging.basicConfig(handlers=[handler], level=logging.INFO, force=True)

    def make_player(transcript: Transcript) -> Player:
        if auto:
            return AutoPlayer(console)
        from .interactive import InteractivePlayer  # prompt_toolkit: only for a person

        return InteractivePlayer(console, transcript)

    session = DemoSession(console, make_player, load_guide(), load_script(), path, note)
    try:
        return anyio.run(session.run)
    except KeyboardInterrupt:
        console.print("\ndemo interrupted.")
        return 130
    except ServerStartError as exc:
        print(escaped(f"askbridge demo: {_start_failure(exc, path)}"), file=sys.stderr)
        return 1


def _private_dir(path: Path) -> TextIO:
    """S5: the data directory 0700 (made so when new) and its host.log 0600, created here
    before the server appends to it; the log, open for appending."""
    new = not path.exists()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if new:
        os.chmod(path, 0o700)  # whatever the umask
    fd = os.open(path / "host.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o600)
    return open(fd, "a", encoding="utf-8", buffering=1)


def _start_failure(exc: ServerStartError, path: Path) -> str:
    """The server's own one-line reason, and what to do about it."""
    reason = exc.stderr_tail[-1].removeprefix("askbridge: ") if exc.stderr_tail else str(exc)
    if "is in use by" in reason:
        reason = reason.split("; ", 1)[0]  # the remedy below is the demo's own
        return (
            f"{reason}; stop it (`askbridge host --stop --data-dir {path}`), or pick another "
            "--data-dir (or none: a temporary one)"
        )
    return f"the askbridge server did not start (status {exc.status}): {reason}"


__all__ = ["run_demo"]
