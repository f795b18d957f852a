"""The Neovim plugin in a real terminal: Neovim's TUI inside tmux, the builtin picker.

tests/editors/test_nvim_blocking.py types into the builtin, blocking
`vim.ui.select` of a headless Neovim; here the same picker runs in Neovim's
real TUI in a tmux pane (a private tmux server on a socket in tmp_path, killed
at the end), the keys are typed with `tmux send-keys`, and messages are shown
with the real `vim.notify` (an error message emitted while `inputlist()` waits
aborts the picker: that is how the "cannot resume running coroutine" error
reached the model). The screen is read with `tmux capture-pane`.

tmux is a Debian package (.ci/run installs it); a missing tmux fails the test.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_nvim import (
    DB_QUESTION,
    SCENARIO_ARGS,
    TIMED_ASK_S,
    VIM_LOG_ERROR,
    NvimRun,
    ask,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
    nvim_binary,
    nvim_env,
    server_command,
)

from stored_logs import read_log

WAIT_S = 30


class Terminal:
    """One tmux server (private socket) running one command in a 100×40 pane."""

    def __init__(self, tmp_path: Path) -> None:
        tmux = shutil.which("tmux")
        if tmux is None:
            pytest.fail("tmux is missing: apt-get install tmux (.ci/run does)")
        self.tmux = [tmux, "-S", str(tmp_path / "tmux.sock"), "-f", "/dev/null"]
        self.tmp_path = tmp_path

    def start(self, argv: list[str], env: dict[str, str]) -> None:
        script = self.tmp_path / "run.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        script.write_text(f"{exports}exec {shlex.join(argv)}\n")
        self.run("new-session", "-d", "-s", "nvim", "-x", "100", "-y", "40", f"sh {script}")

    def run(self, *args: str) -> str:
        proc = subprocess.run(
            [*self.tmux, *args], capture_output=True, text=True, timeout=10, check=False
        )
        return proc.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-t", "nvim")

    def send(self, *keys: str) -> None:
        self.run("send-keys", "-t", "nvim", *keys)

    def close(self) -> None:
        self.run("kill-server")


def marks_env(marks: Path) -> dict[str, str]:
    """A terminal's Neovim: marks for the test to wait on, messages shown for real."""
    return {"ASKBRIDGE_TEST_MARKS": str(marks), "ASKBRIDGE_TEST_REAL_NOTIFY": "1"}


def terminal_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """What Neovim in the terminal gets of a scenario's environment (`nvim_env`): the
    harness's variables and PATH, a private HOME, the terminal's type."""
    kept = {k: v for k, v in env.items() if k.startswith("ASKBRIDGE_")}
    return kept | {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "TERM": "tmux-256color",
    }


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


def wait_for(what: str, cond: Any, term: Terminal) -> None:
    deadline = time.monotonic() + WAIT_S
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; the screen:\n{term.screen()}")
        time.sleep(0.05)


def late_reply_run(result_path: Path, data_dir: Path) -> tuple[dict[str, Any], NvimRun, Any]:
    """A scenario whose one question went pending and was answered late: its result (no
    error, no error message shown), its run, and the answers of its one late reply."""
    result: dict[str, Any] = json.loads(result_path.read_text())
    assert "error" not in result, result["error"]
    assert [n for n in result["notes"] if n["level"] == VIM_LOG_ERROR] == []
    run = NvimRun(result, read_log(data_dir, result["session_id"]))
    (tool_result,) = run.tool_results()
    assert json.loads(tool_result["content"])["pending"] is True
    replies = [e for e in run.log if e["type"] == "user/message" and e.get("source")]
    assert len(replies) == 1
    reply = json.loads(replies[0]["content"][0]["text"])
    return result, run, reply["answers"]


def test_L7_builtin_picker_in_a_terminal_answered_after_the_countdown(
    tmp_path: Path, terminal: Terminal
) -> None:
    """Issue 9 item 5, as a user sees it: a timed question on the builtin picker
    in a real terminal; the countdown reaches zero while the list waits; the user
    then types 2 Enter. The model got pending (not an error), the choice arrived
    as a late reply that woke the agent, and no error message was shown. The
    list shows each entry numbered once (`1: SQLite — a file`)."""
    data_dir, marks, result_path = tmp_path / "data", tmp_path / "marks", tmp_path / "result.json"
    steps = [ask("call-1", [DB_QUESTION]), {"text": "waiting"}, {"text": "thanks"}]
    cmd = server_command(steps, "timed", TIMED_ASK_S)
    env = nvim_env(tmp_path, "scenario_tmux_late.lua", cmd, data_dir, None, marks_env(marks))
    terminal.start([str(nvim_binary()), *SCENARIO_ARGS], terminal_env(env, tmp_path))

    def marked(name: str) -> bool:
        return marks.exists() and name in marks.read_text().split()

    wait_for("the picker", lambda: "Type number and <Enter>" in terminal.screen(), terminal)
    wait_for("the countdown to reach zero", lambda: marked("timed_out"), terminal)
    screen = terminal.screen()
    terminal.send("2", "Enter")
    wait_for("the scenario to finish", result_path.exists, terminal)

    assert "1: SQLite — a file\n2: Postgres\n3: Other… (type your own answer)\n" in screen, screen
    assert f"[Setup] Which database? ({TIMED_ASK_S}s left)" in screen, screen
    result, run, answers = late_reply_run(result_path, data_dir)
    assert result["server_exit_code"] == 0
    assert answers == [{"id": "db", "selected": ["Postgres"]}]
    assert [e["cause"] for e in run.log if e["type"] == "turn/start"] == ["prompt", "inbox"]


LANGS_QUESTION = {
    "id": "langs",
    "question": "Which languages?",
    "header": "Setup",
    "multi_select": True,
    "options": [{"label": "Python"}, {"label": "Rust"}, {"label": "Go"}],
}
LATE_MULTI_PROMPT = "[Setup] Which languages? (no longer waiting: your answer goes as a late reply)"


def test_L7_builtin_multi_select_keeps_its_list_after_the_countdown_and_the_status_clears(
    tmp_path: Path, terminal: Terminal
) -> None:
    """Issue 18 item 7, in a real 80×24 terminal with askbridge's status in the statusline:
    a timed multi-select on the builtin picker runs out while its list waits. Each toggle
    typed afterwards redraws the list (no hit-enter prompt comes between two lists and takes
    the keys), Done sends the checked options as one late reply, and once that reply has
    settled the call the statusline no longer says "1 pending" (Vim redraws a statusline
    only on its own events, so the plugin must ask for it)."""
    data_dir, marks, result_path = tmp_path / "data", tmp_path / "marks", tmp_path / "result.json"
    steps = [ask("call-1", [LANGS_QUESTION]), {"text": "waiting"}, {"text": "thanks"}]
    cmd = server_command(steps, "timed", TIMED_ASK_S)
    env = nvim_env(tmp_path, "scenario_tmux_multi_late.lua", cmd, data_dir, None, marks_env(marks))
    terminal.start([str(nvim_binary()), *SCENARIO_ARGS], terminal_env(env, tmp_path))
    terminal.run("resize-window", "-t", "nvim", "-x", "80", "-y", "24")

    def marked(name: str) -> bool:
        return marks.exists() and name in marks.read_text().split()

    def bottom() -> list[str]:
        return terminal.screen().rstrip("\n").splitlines()[-7:]

    wait_for("the picker", lambda: "Type number and <Enter>" in terminal.screen(), terminal)
    wait_for("the countdown to reach zero", lambda: marked("timed_out"), terminal)
    for key, checked in (("1", "1: [x] Python"), ("2", "2: [x] Rust")):
        terminal.send(key, "Enter")
        wait_for(f"the list with {checked!r}", lambda c=checked: c in bottom(), terminal)  # type: ignore[misc]
        screen = bottom()
        assert screen[0] == LATE_MULTI_PROMPT, screen
        assert screen[-1].startswith("Type number and <Enter>"), screen
        assert not any("Press ENTER" in line for line in terminal.screen().splitlines()), screen
    terminal.send("5", "Enter")  # 5: Done (2 selected)
    wait_for("the late reply to settle", lambda: marked("settled"), terminal)
    wait_for(
        "the statusline to drop '1 pending'",
        lambda: "[]" in terminal.screen().splitlines()[-2:][0],
        terminal,
    )
    assert "pending" not in terminal.screen(), terminal.screen()
    with marks.open("a") as handle:
        handle.write("seen\n")
    wait_for("the scenario to finish", result_path.exists, terminal)

    _, _, answers = late_reply_run(result_path, data_dir)
    assert answers == [{"id": "langs", "selected": ["Python", "Rust"]}]
