"""The Neovim plugin with the builtin, blocking `vim.ui.select` (no picker plugin).

The builtin picker is `inputlist()`: the call returns only once the user has
typed a number, and Neovim keeps running timers and server messages while it
waits. The user is simulated by typing keys (`nvim_input`) into that real
picker (tests/editors/nvim/harness.lua `H.use_builtin_select`, `H.type_when`);
test_nvim_tmux.py does the same through a real terminal.

Issue 9 item 5 (L7): an answer chosen after the card's countdown reached zero,
or after the server withdrew the request, is never an error result: the card
replied ASK_TIMED_OUT at zero (or the transport -32800 on `$/cancelRequest`),
and what the user picks then goes as a late reply (`userQuestions/answer`).
"""

from __future__ import annotations

import json
from typing import Any

from test_nvim import DB_QUESTION, TIMED_ASK_S, VIM_LOG_WARN, ask, run_scenario

from stored_logs import read_logs

COLOUR = {"id": "color", "question": "Colour?", "options": [{"label": "red"}, {"label": "blue"}]}


def replies_to(log: list[dict[str, Any]], call_id: str) -> list[dict[str, Any]]:
    return [
        json.loads(e["content"][0]["text"])
        for e in log
        if e["type"] == "user/message" and (e.get("source") or {}).get("callId") == call_id
    ]


def test_L7_TW7_blocking_picker_answered_after_the_countdown_goes_late(tmp_path) -> None:
    """A timed batch on the builtin picker: the countdown reaches zero during the
    first question. The card replies ASK_TIMED_OUT at once (the tool returns
    pending; no "cannot resume running coroutine", no PROVIDER_ERROR), the user's
    later choice and the second question are still asked and sent as one late
    reply, which wakes the agent (inbox turn)."""
    steps = [ask("call-1", [DB_QUESTION, COLOUR]), {"text": "waiting"}, {"text": "thanks"}]
    run = run_scenario(
        tmp_path,
        "scenario_blocking_late.lua",
        steps,
        ask_mode="timed",
        ask_timeout=TIMED_ASK_S,
        builtin_picker=True,
    )

    (closed,) = [e for e in run.result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert closed["data"]["reason"] == "timed_out"
    first, second = run.prompts()
    assert first["prompt"] == f"[Setup] Which database? (1/2) ({TIMED_ASK_S}s left)"
    assert second["prompt"] == "Colour? (2/2) (no longer waiting: your answer goes as a late reply)"
    assert "more_time" not in second["item_kinds"]
    # The builtin picker numbers the entries; we do not number them again.
    printed = run.result["printed"]
    assert "1: SQLite — a file\n2: Postgres\n3: Other… (type your own answer)\n" in printed
    assert "1: red\n2: blue\n" in printed
    # The user typed after the card had timed out.
    assert run.result["typed"][0]["at_ms"] >= closed["at_ms"]

    (result,) = run.tool_results()
    assert json.loads(result["content"])["pending"] is True
    assert not any(e.get("isError") for e in run.tool_results())
    (reply,) = replies_to(run.log, "call-1")
    assert reply["answers"] == [
        {"id": "db", "selected": ["Postgres"]},
        {"id": "color", "selected": ["red"]},
    ]
    assert [e["cause"] for e in run.log if e["type"] == "turn/start"] == ["prompt", "inbox"]
    answered = [e for e in run.result["events"] if e["name"] == "AskbridgeAnswered"]
    assert [e["data"]["accepted"] for e in answered] == [True]
    messages = [n["msg"] for n in run.result["notes"]]
    assert any("sent as a late reply" in m for m in messages), messages
    assert run.result["pending_after"] == 0


def test_A9_L7_withdrawn_while_the_blocking_picker_waits(tmp_path) -> None:
    """The server withdraws the request (turn cancelled) while the builtin picker
    waits and cannot be closed: no error is sent, the user's later choice goes as
    a late reply, the server answers `false` (the question went with its turn,
    L1) and the user is told so. The model got ASK_ABORTED, never the choice."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "never reached"}]
    run = run_scenario(
        tmp_path,
        "scenario_blocking_withdrawn.lua",
        steps,
        ask_mode="timed",
        ask_timeout=60,
        builtin_picker=True,
    )

    assert run.result["stop_reason"] == "cancelled"
    (closed,) = [e for e in run.result["events"] if e["name"] == "AskbridgePromptClosed"]
    assert closed["data"]["reason"] == "server_cancelled"
    assert run.result["typed"][0]["at_ms"] >= closed["at_ms"]
    (result,) = run.tool_results()
    assert result["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}
    assert replies_to(run.log, "call-1") == []
    (answered,) = [e for e in run.result["events"] if e["name"] == "AskbridgeAnswered"]
    assert answered["data"]["accepted"] is False and answered["data"].get("error") is None
    warnings = [n["msg"] for n in run.result["notes"] if n["level"] == VIM_LOG_WARN]
    assert any("call-1 is no longer waiting for a reply" in m for m in warnings), warnings


def test_one_card_at_a_time_on_the_blocking_picker(tmp_path) -> None:
    """Two sessions ask at once: the second card waits until the first was
    answered, instead of opening a second inputlist inside the first one (where
    the keys typed for the first would answer the second)."""
    steps = [ask("call-1", [DB_QUESTION]), {"text": "ok"}]
    run = run_scenario(tmp_path, "scenario_two_cards.lua", steps, builtin_picker=True)

    first, second = run.prompts()
    assert first["session_id"] != second["session_id"]
    typed_first, _ = run.result["typed"]
    assert second["at_ms"] >= typed_first["at_ms"]
    logs = read_logs(tmp_path / "data")
    answers = {
        session: [
            json.loads(e["content"])["answers"][0]["selected"]
            for e in logs[session]
            if e["type"] == "tool/result"
        ]
        for session in run.result["sessions"]
    }
    assert answers == {first["session_id"]: [["SQLite"]], second["session_id"]: [["Postgres"]]}
