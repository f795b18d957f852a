"""`askbridge demo`: the Quick start's guided session, in the terminal.

`run_demo(auto, data_dir)` starts a real `askbridge serve` subprocess with the
built-in script model (`script.json`, guided by `guide.json`) and walks the
person through answering its questions: options, multi-select with their own
text, a timed question claimed while typing, and one left to time out and
answered late, which wakes the agent into a new turn. `auto=True` plays the
same session by itself (no stdin needed). Without `data_dir` the session lives
in a fresh temp directory, printed at the start and kept afterwards so the
event log can be inspected. Returns the process exit status.

Modules: `session` (the run), `terminal` (cards, `--auto`), `interactive`
(the prompt_toolkit prompts), `transcript`
(printing what the server sends), `waitclock` (countdown and claims),
`answers` (typed text → answer items), `guide` (the JSON data).
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import anyio
from rich.console import Console

from .guide import load_guide, load_script
from .session import DemoSession
from .terminal import AutoPlayer, Player
from .transcript import Transcript


def run_demo(auto: bool, data_dir: str | None) -> int:
    console = Console(highlight=False)
    if not auto and not sys.stdin.isatty():
        console.print("stdin is not a terminal, so the demo answers by itself (as with --auto).")
        auto = True
    path = Path(data_dir) if data_dir else Path(tempfile.mkdtemp(prefix="askbridge-demo-"))
    path.mkdir(parents=True, exist_ok=True)
    # The client's own log lines go to a file too: the terminal is the UI.
    logging.basicConfig(filename=path / "demo.log", level=logging.INFO, force=True)

    def make_player(transcript: Transcript) -> Player:
        if auto:
            return AutoPlayer(console)
        from .interactive import InteractivePlayer  # prompt_toolkit: only for a person

        return InteractivePlayer(console, transcript)

    session = DemoSession(console, make_player, load_guide(), load_script(), path)
    try:
        return anyio.run(session.run)
    except KeyboardInterrupt:
        console.print("\ndemo interrupted.")
        return 130


__all__ = ["run_demo"]
