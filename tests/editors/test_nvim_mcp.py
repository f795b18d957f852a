"""An MCP agent asks, Neovim answers (X1, X2, X5, M3).

The agent is the official `mcp` SDK's client driving a real `askbridge mcp`
(tests/mcp/sdk_client.py `mcp_session`); Neovim runs the default
`askbridge serve` on the same data directory: both are front doors of one
host (`--host auto`). Neovim never creates or loads a session: a client that
renders questions follows every external session from `initialize` on (X1),
and gets a question that was already open when it attached (M3).
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from test_nvim import (
    DB_QUESTION,
    SCENARIO_ARGS,
    VIM_LOG_ERROR,
    VIM_LOG_WARN,
    no_host_outlives_the_test,  # noqa: F401 (an autouse fixture)
    nvim_binary,
    nvim_env,
    server_command,
)
from test_nvim_tmux import (  # noqa: F401 (terminal: a fixture)
    Terminal,
    marks_env,
    terminal,
    terminal_env,
    wait_for,
)
from test_nvim_windows import Marks, Nvim, neovims  # noqa: F401 (neovims: a fixture)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mcp"))
from sdk_client import mcp_session, text  # tests/mcp, put on the path above

CALL_TIMEOUT_S = 60
ASK_TIMEOUT_S = 120


def ask_args(question: dict[str, Any]) -> dict[str, Any]:
    return {"questions": [question], "timeout": ASK_TIMEOUT_S}


async def test_M3_X1_X2_an_agents_questions_show_in_neovim_without_loading_a_session(
    tmp_path: Path,
    neovims: list[Nvim],  # noqa: F811 (the fixture imported above)
) -> None:
    """The agent asks before Neovim runs; Neovim starts, shows it with its countdown
    (a claimed timed wait) and the user's answer is the tool result. A second
    question, asked while Neovim runs, shows and is answered too."""
    marks = Marks(tmp_path / "marks")
    waiting = asyncio.Event()

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        waiting.set()  # the question is asked: nobody can show it yet

    async with mcp_session(tmp_path, name="claude-code") as agent:
        before = asyncio.create_task(
            agent.call_tool(
                "ask_user_question", ask_args(DB_QUESTION), progress_callback=on_progress
            )
        )
        await asyncio.wait_for(waiting.wait(), CALL_TIMEOUT_S)
        nvim = Nvim(tmp_path, "nvim", "scenario_mcp_questions.lua", server_command(None), marks)
        neovims.append(nvim)
        first = await asyncio.wait_for(before, CALL_TIMEOUT_S)
        second_question = {**DB_QUESTION, "id": "db2", "question": "And for the tests?"}
        second = await asyncio.wait_for(
            agent.call_tool("ask_user_question", ask_args(second_question)), CALL_TIMEOUT_S
        )
        listed = await agent.call_tool("get_answers", {})
    marks.put("done")
    result = nvim.finish()

    assert json.loads(text(first)) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    assert json.loads(text(second)) == {"answers": [{"id": "db2", "selected": ["Postgres"]}]}
    assert json.loads(text(listed)) == {"answers": [], "pending": []}
    shown_first, shown_second = result["prompts"]
    assert shown_first["session_id"] == shown_second["session_id"]  # the agent's session
    assert (shown_first["call_id"], shown_second["call_id"]) != (None, None)
    assert re.fullmatch(r"\[Setup\] Which database\? \(1[012]\ds left\)", shown_first["prompt"])
    assert shown_second["prompt"].startswith("[Setup] And for the tests? (")
    assert shown_first["items"][:3] == [
        "SQLite — a file",
        "Postgres",
        "Other… (type your own answer)",
    ]
    assert shown_first["item_kinds"][3:] == ["more_time"]  # a timed wait the plugin claimed
    assert [n for n in result["notes"] if n["level"] >= VIM_LOG_WARN] == []
    assert result["pending_after"] == 0


BASH_INPUT = {"command": "rm -rf build", "description": "Clean the build"}
# A backtick run and a line that would close a shorter fence: the server fences the command
# with four backticks, and Neovim shows that text as it is (S17).
PUSH_INPUT = {"command": "cat <<'EOF'\n```\nEOF\ngit push --force"}
PLAN = "1. Add the table\n2. Migrate"


async def test_X5_S17_approval_and_plan_review_cards_decide_the_agents_tool_calls(
    tmp_path: Path,
    neovims: list[Nvim],  # noqa: F811 (the fixture imported above)
) -> None:
    """`approval_prompt` asks through Neovim: a Bash command is an approval card
    (the command as a shell block, Allow / Deny and nothing else), ExitPlanMode
    a plan-review card (the plan, Approve plan / Keep planning / feedback). The
    user's choices are the agent's `{"behavior": …}` results. S17: a command with a
    backtick run is shown with the server's longer fence, as sent."""
    marks = Marks(tmp_path / "marks")
    nvim = Nvim(tmp_path, "nvim", "scenario_mcp_approvals.lua", server_command(None), marks)
    neovims.append(nvim)
    await asyncio.to_thread(marks.wait, "ready", nvim)

    async def decide(tool_name: str, tool_input: dict[str, Any]) -> Any:
        args = {"tool_name": tool_name, "input": tool_input, "tool_use_id": "toolu_1"}
        result = await asyncio.wait_for(agent.call_tool("approval_prompt", args), CALL_TIMEOUT_S)
        assert result.is_error is False
        return json.loads(text(result))

    async with mcp_session(tmp_path, name="claude-code") as agent:
        allowed = await decide("Bash", BASH_INPUT)
        denied = await decide("Bash", PUSH_INPUT)
        approved = await decide("ExitPlanMode", {"plan": PLAN})
        sent_back = await decide("ExitPlanMode", {"plan": PLAN})
    marks.put("done")
    result = nvim.finish()

    assert allowed == {"behavior": "allow", "updatedInput": BASH_INPUT}
    assert denied == {"behavior": "deny", "message": "The user denied this Bash call."}
    assert approved == {"behavior": "allow", "updatedInput": {"plan": PLAN}}
    assert sent_back == {"behavior": "deny", "message": "Also add an index"}

    bash, push, plan, plan_again, feedback = result["prompts"]
    assert bash["kind"] == push["kind"] == "askbridge.approval"
    assert bash["prompt"] == (
        "[Permission] Bash: Allow Bash?\n\nClean the build\n\n```sh\nrm -rf build\n```\n"
    )
    assert push["prompt"] == (
        "[Permission] Bash: Allow Bash?\n\n````sh\ncat <<'EOF'\n```\nEOF\ngit push --force\n````\n"
    )
    assert bash["items"] == push["items"] == ["Allow", "Deny"]  # no Other, no Skip
    assert plan["kind"] == plan_again["kind"] == "askbridge.plan_review"
    assert plan["prompt"] == f"[Plan] Approve this plan?\n\n{PLAN}\n"
    assert plan["items"] == [
        "Approve plan",
        "Keep planning",
        "Give feedback… (type what to change)",
    ]
    assert feedback["ui"] == "input"
    assert feedback["prompt"].startswith("[Plan] Approve this plan?\n\n1. Add the table")
    assert [n for n in result["notes"] if n["level"] >= VIM_LOG_WARN] == []


async def test_X5_the_cards_on_the_builtin_picker_in_a_terminal(
    tmp_path: Path,
    terminal: Terminal,  # noqa: F811 (the fixture imported above)
) -> None:
    """As a user sees them in a terminal with the builtin picker: the approval card
    shows the command as a shell block above `1: Allow` / `2: Deny`; the
    plan-review card shows the plan above its three entries. Typing 1 allows;
    typing 3 and then the feedback sends the plan back with the user's words."""
    marks = Marks(tmp_path / "marks")
    cmd = server_command(None)
    env = nvim_env(
        tmp_path, "scenario_mcp_terminal.lua", cmd, tmp_path / "data", None, marks_env(marks.path)
    )
    terminal.start([str(nvim_binary()), *SCENARIO_ARGS], terminal_env(env, tmp_path))
    await asyncio.to_thread(marks.wait, "ready", terminal)

    async def shown(text: str) -> str:
        await asyncio.to_thread(wait_for, text, lambda: text in terminal.screen(), terminal)
        return terminal.screen()

    async with mcp_session(tmp_path, name="claude-code") as agent:
        bash = asyncio.create_task(
            agent.call_tool("approval_prompt", {"tool_name": "Bash", "input": BASH_INPUT})
        )
        bash_screen = await shown("2: Deny")
        terminal.send("1", "Enter")
        allowed = json.loads(text(await asyncio.wait_for(bash, CALL_TIMEOUT_S)))
        plan = asyncio.create_task(
            agent.call_tool(
                "approval_prompt", {"tool_name": "ExitPlanMode", "input": {"plan": PLAN}}
            )
        )
        plan_screen = await shown("3: Give feedback")
        terminal.send("3", "Enter")
        sent_back = json.loads(text(await asyncio.wait_for(plan, CALL_TIMEOUT_S)))
    marks.put("done")
    result_path = tmp_path / "result.json"
    await asyncio.to_thread(wait_for, "the scenario to finish", result_path.exists, terminal)

    assert allowed == {"behavior": "allow", "updatedInput": BASH_INPUT}
    assert sent_back == {"behavior": "deny", "message": "Also add an index"}
    card = "[Permission] Bash: Allow Bash?\n\nClean the build\n\n```sh\nrm -rf build\n```\n"
    assert card in bash_screen and "1: Allow\n2: Deny\n" in bash_screen, bash_screen
    assert "3:" not in bash_screen.partition("1: Allow")[2], bash_screen  # nothing else offered
    plan_card = f"[Plan] Approve this plan?\n\n{PLAN}\n"
    entries = "1: Approve plan\n2: Keep planning\n3: Give feedback… (type what to change)\n"
    assert plan_card in plan_screen and entries in plan_screen, plan_screen
    result: dict[str, Any] = json.loads(result_path.read_text())
    assert "error" not in result, result["error"]
    assert [n for n in result["notes"] if n["level"] >= VIM_LOG_ERROR] == []


async def test_X4_L4_a_question_that_ran_out_in_neovim_is_answered_late_through_get_answers(
    tmp_path: Path,
    neovims: list[Nvim],  # noqa: F811 (the fixture imported above)
) -> None:
    """The agent asks with a 2 s timeout; Neovim claims it and its countdown runs
    out: the agent gets pending (telling it to call get_answers). The user then
    answers with :AskbridgeAnswer in Neovim; get_answers delivers that answer."""
    marks = Marks(tmp_path / "marks")
    nvim = Nvim(tmp_path, "nvim", "scenario_mcp_late.lua", server_command(None), marks)
    neovims.append(nvim)
    await asyncio.to_thread(marks.wait, "ready", nvim)
    async with mcp_session(tmp_path, name="claude-code") as agent:
        args = {"questions": [DB_QUESTION], "timeout": 2}
        asked = await asyncio.wait_for(agent.call_tool("ask_user_question", args), CALL_TIMEOUT_S)
        pending = json.loads(text(asked))
        await asyncio.to_thread(marks.wait, "replied", nvim)
        got = await agent.call_tool("get_answers", {})
    marks.put("done")
    result = nvim.finish()

    assert pending["pending"] is True and "get_answers" in pending["message"]
    call_id = pending["callId"]
    assert json.loads(text(got)) == {
        "answers": [
            {
                "callId": call_id,
                "questions": [DB_QUESTION],
                "answers": [{"id": "db", "selected": ["Postgres"]}],
            }
        ],
        "pending": [],
    }
    messages = [n["msg"] for n in result["notes"]]
    assert messages == [
        f"askbridge: {call_id} timed out and is pending for the agent: :AskbridgeAnswer replies later",
        f"askbridge: reply sent for {call_id}",
        "askbridge: server stopped",  # the harness stops it at the end
    ]
