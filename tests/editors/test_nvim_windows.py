"""Several Neovims on one data directory (H2, M1, M2, M5, L7).

Every Neovim runs the default `askbridge serve` (`--host auto`): the first
one's front door starts the data directory's host, the others attach to it.
Each Neovim runs its own Lua scenario in the background (`Nvim`); they wait
for each other through one marks file (harness.lua `H.mark` /
`H.await_mark`, `Marks` here). The tmux test runs one of them in a real
terminal with the builtin, blocking picker (test_nvim_tmux.py's `Terminal`).

No Neovim and no host outlives a test: `neovims` kills what is still running,
`no_host_outlives_the_test` (test_nvim.py) stops the host.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_nvim import (
    DB_QUESTION,
    HEADLESS,
    RUN_TIMEOUT_S,
    SCENARIO_ARGS,
    VIM_LOG_ERROR,
    VIM_LOG_WARN,
    ask,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
    nvim_binary,
    nvim_env,
    scenario_result,
    server_command,
)
from test_nvim_tmux import (  # noqa: F401 (terminal: a fixture)
    Terminal,
    marks_env,
    terminal,
    terminal_env,
    wait_for,
)

from stored_logs import read_log

# Long enough that the countdown never ends a card in these tests.
ASK_TIMEOUT_S = 120
MARK_WAIT_S = 30


class Marks:
    """The marks file the Neovims of a test share (one `name [value]` per line)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def value(self, name: str) -> str | bool | None:
        if not self.path.exists():
            return None
        found: str | bool | None = None
        for line in self.path.read_text().splitlines():
            key, _, value = line.partition(" ")
            if key == name:
                found = value or True
        return found

    def put(self, name: str) -> None:
        with self.path.open("a") as marks:
            marks.write(name + "\n")

    def wait(self, name: str, what: Any = None) -> str | bool:
        """Waits for the mark; `what` (a Terminal, an Nvim) is shown on failure."""
        deadline = time.monotonic() + MARK_WAIT_S
        while (value := self.value(name)) is None:
            if time.monotonic() > deadline:
                shown = what.screen() if isinstance(what, Terminal) else what
                pytest.fail(f"timed out waiting for the mark {name}:\n{shown}")
            time.sleep(0.05)
        return value


class Nvim:
    """One headless Neovim running a scenario in the background, in its own directory."""

    def __init__(
        self,
        tmp_path: Path,
        name: str,
        scenario: str,
        server_cmd: list[str],
        marks: Marks,
        setup_opts: dict[str, Any] | None = None,
    ) -> None:
        self.dir = tmp_path / name
        self.dir.mkdir()
        env = nvim_env(
            self.dir,
            scenario,
            server_cmd,
            tmp_path / "data",
            setup_opts,
            {"ASKBRIDGE_TEST_MARKS": str(marks.path)},
        )
        self.output = self.dir / "output.txt"
        with self.output.open("wb") as output:
            self.proc = subprocess.Popen(
                [str(nvim_binary()), *HEADLESS],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.dir,
            )

    def finish(self, clean: bool = True) -> dict[str, Any]:
        """Waits for the scenario to end; what it recorded (nothing printed, no error in
        the scenario; `clean`: no error shown to the user, the server exited 0)."""
        try:
            code = self.proc.wait(timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"{self.dir.name} did not finish:\n{self.output.read_text()}")
        result = scenario_result(self.dir, code, self.output.read_text(errors="replace"))
        if clean:
            assert [n for n in result["notes"] if n["level"] == VIM_LOG_ERROR] == []
            assert result["server_exit_code"] == 0, result
        return result

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def __repr__(self) -> str:
        return f"{self.dir.name}:\n{self.output.read_text(errors='replace')}"


@pytest.fixture
def neovims() -> Iterator[list[Nvim]]:
    """Neovims a test starts (append them); any still running at the end is killed."""
    started: list[Nvim] = []
    try:
        yield started
    finally:
        for nvim in started:
            nvim.kill()


def session_log(data_dir: Path, session_id: str) -> list[dict[str, Any]]:
    """The session's event log, read while the host may still run (WAL, read-only use)."""
    return read_log(data_dir, session_id)


def asker_command() -> list[str]:
    """The first window's server: a script model that asks once (timed) and says thanks."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "thanks"}]
    return server_command(steps, "timed", ASK_TIMEOUT_S)


def test_M1_M2_two_neovims_one_session_first_answer_wins(
    tmp_path: Path, neovims: list[Nvim]
) -> None:
    """Two Neovims on one data directory both start (no "in use" error: one host).
    A creates the session, B loads it with :AskbridgeSessions; the question A's
    prompt leads to shows in both; B answers; A's picker window is closed and A
    is told it was answered elsewhere; the model got B's answer."""
    marks = Marks(tmp_path / "marks")
    first = Nvim(tmp_path, "a", "scenario_windows_asker.lua", asker_command(), marks)
    neovims.append(first)
    second = Nvim(tmp_path, "b", "scenario_windows_answerer.lua", server_command(None), marks)
    neovims.append(second)
    a, b = first.finish(), second.finish()

    session_id = a["session_id"]
    assert b["session_id"] == session_id
    (shown_a,) = a["prompts"]
    shown_b = next(p for p in b["prompts"] if p.get("call_id") == "call-1")
    for shown in (shown_a, shown_b):
        assert (shown["session_id"], shown["prompt"]) == (session_id, shown_a["prompt"])
        assert shown["prompt"].startswith("[Setup] Which database?")
    assert shown_b["at_ms"] > 0 and a["picker_closed"] is True and a["win_valid_after"] is False
    closed = [e["data"]["reason"] for e in a["events"] if e["name"] == "AskbridgePromptClosed"]
    assert closed == ["server_cancelled"]
    warnings = [n["msg"] for n in a["notes"] if n["level"] == VIM_LOG_WARN]
    assert warnings == [
        "askbridge: the question call-1 was closed: answered elsewhere (in another window or client)"
    ]
    assert a["stop_reason"] == "end_turn"
    assert [n["level"] for n in b["notes"] if n["level"] >= VIM_LOG_WARN] == []

    log = session_log(tmp_path / "data", session_id)
    (result,) = [e for e in log if e["type"] == "tool/result"]
    assert json.loads(result["content"]) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}


def test_M2_L7_withdrawn_builtin_picker_in_a_terminal_goes_late_and_is_refused(
    tmp_path: Path,
    terminal: Terminal,  # noqa: F811 (the fixture imported above)
    neovims: list[Nvim],
) -> None:
    """A runs in a real terminal with the builtin picker; B (headless) loads A's
    session and answers first. A's inputlist cannot be closed: A sends no error
    (the transport answered the withdrawal), the user then types 1 Enter there,
    which goes as a late reply; the server refuses it (settled, L6) and A says
    it was already answered elsewhere. The model got B's answer only."""
    marks = Marks(tmp_path / "marks")
    data_dir = tmp_path / "data"
    (tmp_path / "a").mkdir()
    scenario = "scenario_windows_terminal.lua"
    env = nvim_env(tmp_path / "a", scenario, asker_command(), data_dir, None, marks_env(marks.path))
    terminal.start([str(nvim_binary()), *SCENARIO_ARGS], terminal_env(env, tmp_path / "a"))
    second = Nvim(tmp_path, "b", "scenario_windows_answerer.lua", server_command(None), marks)
    neovims.append(second)

    marks.wait("withdrawn", terminal)
    screen = terminal.screen()
    terminal.send("1", "Enter")
    marks.wait("done", terminal)
    b = second.finish()
    result_path = tmp_path / "a" / "result.json"
    wait_for("the terminal's scenario to write its result", result_path.exists, terminal)

    assert "1: SQLite — a file\n2: Postgres\n" in screen, screen
    a: dict[str, Any] = json.loads(result_path.read_text())
    assert "error" not in a, a["error"]
    assert [n for n in a["notes"] if n["level"] == VIM_LOG_ERROR] == []
    (closed,) = [e for e in a["events"] if e["name"] == "AskbridgePromptClosed"]
    assert closed["data"]["reason"] == "server_cancelled"
    (shown,) = a["prompts"]
    assert shown["returned_at_ms"] > closed["at_ms"]  # the user chose after the withdrawal
    (answered,) = [e for e in a["events"] if e["name"] == "AskbridgeAnswered"]
    assert answered["data"]["accepted"] is False and answered["data"].get("error") is None
    warnings = [n["msg"] for n in a["notes"] if n["level"] == VIM_LOG_WARN]
    assert warnings == [
        "askbridge: call-1 was already answered elsewhere: your answer was not sent"
    ]
    assert a["stop_reason"] == "end_turn"
    assert b["session_id"] == a["session_id"]

    log = session_log(data_dir, a["session_id"])
    (result,) = [e for e in log if e["type"] == "tool/result"]
    assert json.loads(result["content"]) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}
    assert [e for e in log if e["type"] == "user/message" and e.get("source")] == []
