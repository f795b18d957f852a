"""Claude Code (`claude -p`, the pinned npm release) with askbridge as its MCP server (X2–X5).

The model is tests/agents/fake_model.py (ANTHROPIC_BASE_URL); the editor is the harness
client on `askbridge serve` with the same data directory. Each case asserts what the real
agent passed back to the model. Real seconds, not the injected clock: the agent is a
separate binary, so timed questions use a 2 s timeout.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
from fake_model import FakeModel, fake_model

from agents import claude, editor_on, run_agent

ASK = "mcp__askbridge__ask_user_question"
GET = "mcp__askbridge__get_answers"
APPROVAL = ["--permission-prompt-tool", "mcp__askbridge__approval_prompt"]
QUESTION = {
    "id": "db",
    "header": "DB",
    "question": "Which database?",
    "options": [{"label": "Postgres"}, {"label": "SQLite"}],
}


def tool_results(model: FakeModel) -> list[Any]:
    """Every tool_result block the agent sent back to the model, in order, once each (later
    requests repeat them, with cache_control marks added)."""
    out: dict[str, Any] = {}
    for body in model.turns():
        for message in body["messages"]:
            if message["role"] != "user" or not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    out.setdefault(block["tool_use_id"], block)
    return list(out.values())


def result_text(block: dict[str, Any]) -> str:
    content = block["content"]
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content)


async def run_claude(model: FakeModel, tmp_path: Path, *extra: str) -> dict[str, Any]:
    run = await run_agent(claude, model.url, tmp_path, extra=list(extra))
    report: dict[str, Any] = json.loads(run.stdout)
    return report


async def test_X3_M2_an_answer_in_the_editor_reaches_the_models_next_request(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        editor.answer_script({"answers": [{"id": "db", "selected": ["Postgres"]}]})
        steps = [{"tool": ASK, "input": {"questions": [QUESTION], "timeout": 60}}, {"text": "ok"}]
        with fake_model(steps) as model:
            await run_claude(model, tmp_path)
        assert [a["questions"] for a in editor.asks] == [[QUESTION]]
        [result] = tool_results(model)
        assert not result.get("is_error")
        assert json.loads(result_text(result).split("\n\n")[0]) == {
            "answers": [{"id": "db", "selected": ["Postgres"]}]
        }


async def test_X2_X4_an_unanswered_timed_question_is_pending_and_get_answers_gets_its_late_answer(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        answered = threading.Event()
        steps = [
            {"tool": ASK, "input": {"questions": [QUESTION], "timeout": 2}},
            {"tool": GET, "input": {}, "after": answered},
            {"text": "ok"},
        ]
        with fake_model(steps) as model:
            async with anyio.create_task_group() as tg:

                async def late() -> None:
                    # The card stays open until the deadline withdraws it (nobody answers).
                    await editor.wait_for(lambda: editor.withdrawn, timeout=60)
                    ask = editor.asks[0]
                    answer = {"answers": [{"id": "db", "selected": ["SQLite"]}]}
                    call_id = ask["wait"]["callId"]
                    assert await editor.answer_late(ask["sessionId"], call_id, answer)
                    answered.set()

                tg.start_soon(late)
                await run_claude(model, tmp_path)
        pending, got = tool_results(model)
        body = json.loads(result_text(pending))
        assert body["pending"] is True and "get_answers" in body["message"]
        answers = json.loads(result_text(got).split("\n\n")[0])
        assert answers["answers"][0]["callId"] == body["callId"]
        assert answers["answers"][0]["answers"] == [{"id": "db", "selected": ["SQLite"]}]


async def test_X3_F3_claude_p_with_no_editor_gets_pending_never_cancelled(tmp_path: Path) -> None:
    """`claude -p` cancels every form unseen: for a timed ask that is not the user's answer."""
    steps = [{"tool": ASK, "input": {"questions": [QUESTION], "timeout": 5}}, {"text": "ok"}]
    with fake_model(steps) as model:
        await run_claude(model, tmp_path)
    [result] = tool_results(model)
    text = result_text(result)
    assert "cancel" not in text.lower(), text
    assert json.loads(text.split("\n\n")[0])["pending"] is True


def _approval_steps(command: str) -> list[dict[str, Any]]:
    bash = {"command": command, "description": "Make a file"}
    return [{"tool": "Bash", "input": bash}, {"text": "ok"}]


async def test_X5_allow_in_the_editor_runs_the_bash_command(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        editor.answer_script({"answers": [{"id": "approval", "selected": ["Allow"]}]})
        with fake_model(_approval_steps("touch made.txt")) as model:
            await run_claude(model, tmp_path, *APPROVAL)
        [ask] = editor.asks
        question = ask["questions"][0]
        assert question["intent"]["kind"] == "approval"
        assert question["intent"]["subject"] == {"name": "Bash"}
        assert "touch made.txt" in question["detail"]
        assert (tmp_path / "work" / "made.txt").exists()
        [result] = tool_results(model)
        assert not result.get("is_error"), result


async def test_X5_deny_in_the_editor_does_not_run_it_and_the_model_sees_the_denial(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        editor.answer_script({"answers": [{"id": "approval", "selected": ["Deny"]}]})
        with fake_model(_approval_steps("touch made.txt")) as model:
            await run_claude(model, tmp_path, *APPROVAL)
        assert not (tmp_path / "work" / "made.txt").exists()
        [result] = tool_results(model)
        assert result.get("is_error") is True
        assert "The user denied this Bash call." in result_text(result)


async def test_X5_feedback_typed_in_the_editor_reaches_the_model(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        feedback = "name it kept.txt instead"
        editor.answer_script({"answers": [{"id": "approval", "selected": [], "custom": feedback}]})
        with fake_model(_approval_steps("touch made.txt")) as model:
            await run_claude(model, tmp_path, *APPROVAL)
        assert not (tmp_path / "work" / "made.txt").exists()
        [result] = tool_results(model)
        assert feedback in result_text(result)


async def test_X5_exit_plan_mode_shows_the_plan_review_card(
    tmp_path: Path,
) -> None:
    async with editor_on(tmp_path / "data") as editor:
        plan = "# Clean up\n\n1. remove the build directory"
        editor.answer_script({"answers": [{"id": "approval", "selected": ["Approve plan"]}]})
        steps = [{"tool": "ExitPlanMode", "input": {"plan": plan}}, {"text": "ok"}]
        with fake_model(steps) as model:
            await run_claude(model, tmp_path, *APPROVAL, "--permission-mode", "plan")
        [ask] = editor.asks
        question = ask["questions"][0]
        assert question["intent"]["kind"] == "plan-review"
        # Claude Code >= 2.1 passes the plan only when the model wrote its plan file, so this
        # run's input is {} (X5: the card says so rather than showing an empty JSON block).
        assert question["detail"] == "The agent gave no plan text"
        [result] = tool_results(model)
        assert not result.get("is_error"), result
