"""`askbridge mcp` against the official SDK's `ClientSession` over stdio (X1–X5, T4, T6, S1).

With an elicitation callback the MCP client itself answers (X3: no editor is
attached); without one nothing can ask, and the tool says so without hanging.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.client import Client
from sdk_client import (
    ASKBRIDGE,
    QUESTION,
    accept_with,
    door_log,
    mcp_session,
    respond,
    server_params,
    text,
)

from askbridge.testing.hosts import stop_host
from full_disk import fill

pytestmark = pytest.mark.timeout(60)


def only_one_text(result: types.CallToolResult) -> bool:
    """X5's whole shape: one text content, no structuredContent, not an error."""
    return (
        len(result.content) == 1
        and isinstance(result.content[0], types.TextContent)
        and result.structured_content is None
        and not result.is_error
    )


def ask(*questions: dict[str, Any], timeout: int | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"questions": list(questions) or [QUESTION]}
    if timeout is not None:
        args["timeout"] = timeout
    return args


async def test_X1_initialize_and_tools(tmp_path: Path) -> None:
    async with mcp_session(tmp_path) as s:
        init = s.initialize_result
        assert init is not None
        assert init.server_info.name == "askbridge"
        assert init.capabilities.tools is not None
        listed = await s.list_tools()
        tools = {t.name: t for t in listed.tools}
        assert sorted(tools) == ["approval_prompt", "ask_user_question", "get_answers"]
        ask_schema = tools["ask_user_question"].input_schema
        assert ask_schema["required"] == ["questions"]
        assert ask_schema["properties"]["timeout"]["type"] == "integer"  # the timed schema (P1)
        assert "get_answers" in (tools["ask_user_question"].description or "")
        assert tools["approval_prompt"].input_schema["required"] == ["tool_name", "input"]
    log = door_log(tmp_path)
    assert "serving an MCP client (door mcp, data dir" in log and "pid" in log


async def test_X2_X3_the_mcp_clients_own_form_answers(tmp_path: Path) -> None:
    seen: list[Any] = []
    elicit = accept_with({"q1": "Postgres", "q1_other": ""}, seen)
    async with mcp_session(tmp_path, elicitation=elicit) as s:
        result = await s.call_tool("ask_user_question", ask(timeout=30))
        assert isinstance(result, types.CallToolResult)
        assert result.is_error is False
        assert text(result) == '{"answers":[{"id":"db","selected":["Postgres"]}]}'
        assert result.structured_content == {"answers": [{"id": "db", "selected": ["Postgres"]}]}
        (params,) = seen
        assert params.message == "Which database?"  # F1: plain text, no [header]
        schema = params.requested_schema
        assert list(schema["properties"]) == ["q1", "q1_other"]  # F2
        db = schema["properties"]["q1"]
        assert (db["title"], db["description"]) == ("Setup", "Which database?")
        assert [o["const"] for o in db["oneOf"]] == ["SQLite", "Postgres"]
        assert schema["properties"]["q1_other"] == {
            "title": "Other",
            "type": "string",
            "description": "Your own answer (replaces the choice)",
        }
        assert "required" not in schema or schema["required"] == []


async def test_X2_free_text_in_other_is_custom(tmp_path: Path) -> None:
    async with mcp_session(
        tmp_path, elicitation=accept_with({"q1": "SQLite", "q1_other": "DuckDB"})
    ) as s:
        result = await s.call_tool("ask_user_question", ask(timeout=30))
        assert json.loads(text(result)) == {
            "answers": [{"id": "db", "selected": [], "custom": "DuckDB"}]
        }


async def test_F2_F3_a_multi_selects_other_is_added_to_the_choices(tmp_path: Path) -> None:
    """F2: a multi-select's Other says it is added to the choices; F3: on accept it is
    `custom` beside the labels ticked, which stay."""
    seen: list[Any] = []
    extras = {
        "id": "extras",
        "question": "Which extras?",
        "options": [{"label": "CI"}, {"label": "Docker"}, {"label": "Pre-commit hooks"}],
        "multi_select": True,  # the model-facing tool's own spelling (T2)
    }
    content = {"q1": ["CI", "Docker"], "q1_other": "Renovate bot"}
    async with mcp_session(tmp_path, elicitation=accept_with(content, seen)) as s:
        result = await s.call_tool("ask_user_question", ask(extras, timeout=30))
        assert json.loads(text(result)) == {
            "answers": [{"id": "extras", "selected": ["CI", "Docker"], "custom": "Renovate bot"}]
        }
    (params,) = seen
    assert params.requested_schema["properties"]["q1_other"] == {
        "title": "Other",
        "type": "string",
        "description": "Your own answer (added to the choices)",
    }


async def test_F3_decline_is_ASK_DECLINED(tmp_path: Path) -> None:
    async with mcp_session(tmp_path, elicitation=respond("decline")) as s:
        result = await s.call_tool("ask_user_question", ask(timeout=30))
        assert result.is_error is True
        assert text(result) == "Error: the user declined to answer ask_user_question"
        assert result.structured_content == {
            "name": "UserQuestionError",
            "code": "ASK_DECLINED",
            "message": "the user declined to answer ask_user_question",
        }


async def test_F3_X3_cancel_of_a_timed_ask_is_pending_at_once_and_answerable(
    tmp_path: Path,
) -> None:
    # `claude -p` cancels every form unseen: that is not the user's answer.
    async with mcp_session(tmp_path, elicitation=respond("cancel")) as s:
        with anyio.fail_after(20):  # at once, not after the 600 s wait
            result = await s.call_tool("ask_user_question", ask(timeout=600))
        body = json.loads(text(result))
        assert result.is_error is False and body["pending"] is True
        answers = await s.call_tool("get_answers", {})
        assert json.loads(text(answers))["pending"] == [body["callId"]]  # still continued


async def test_F3_cancel_of_a_blocking_ask_is_ASK_CANCELLED(tmp_path: Path) -> None:
    async with mcp_session(tmp_path, elicitation=respond("cancel")) as s:
        result = await s.call_tool("ask_user_question", ask(timeout=-1))
        assert result.is_error is True
        assert result.structured_content["code"] == "ASK_CANCELLED"


async def test_F1_F2_a_batch_is_numbered_and_keys_sort_in_ask_order(tmp_path: Path) -> None:
    seen: list[Any] = []
    questions = [
        {"id": f"k{n}", "question": f"Question {n}?", "options": [{"label": "yes"}]}
        for n in range(1, 11)
    ]
    content = {f"q{n:02d}": "yes" for n in range(1, 11)} | {"q10_other": "no way"}
    async with mcp_session(tmp_path, elicitation=accept_with(content, seen)) as s:
        result = await s.call_tool("ask_user_question", ask(*questions, timeout=30))
        answers = json.loads(text(result))["answers"]
        assert answers[0] == {"id": "k1", "selected": ["yes"]}
        assert answers[9] == {"id": "k10", "selected": [], "custom": "no way"}
    (params,) = seen
    assert params.message.splitlines()[:3] == ["10 questions", "1. Question 1?", "2. Question 2?"]
    keys = list(params.requested_schema["properties"])
    assert keys == sorted(keys) and keys[:2] == ["q01", "q01_other"] and keys[-1] == "q10_other"
    assert params.requested_schema["properties"]["q01"] == {
        "type": "string",
        "title": "Question 1?",
        "oneOf": [{"const": "yes", "title": "yes"}],
    }


async def test_X3_no_answerer_indefinite_is_NO_PROVIDER(tmp_path: Path) -> None:
    async with mcp_session(tmp_path) as s:
        with anyio.fail_after(10):
            result = await s.call_tool("ask_user_question", ask(timeout=-1))
        assert result.is_error is True
        assert text(result) == "Error: no user-questions answerer accepted the request"
        assert result.structured_content["code"] == "NO_PROVIDER"


async def test_X2_X3_no_answerer_timed_is_pending_with_progress(tmp_path: Path) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async with mcp_session(tmp_path) as s:
        result = await s.call_tool(
            "ask_user_question", ask(timeout=1), progress_callback=on_progress
        )
        body = json.loads(text(result))
        assert list(body) == ["pending", "callId", "message"]
        assert body["pending"] is True and "get_answers" in body["message"]
        assert "Do not treat this as permission" in body["message"]
        assert result.structured_content == body and result.is_error is False
        assert progress and progress[0][0] == 0
        assert progress[0][2] is not None and progress[0][2].startswith("waiting for the user")
        answers = await s.call_tool("get_answers", {})
        assert json.loads(text(answers)) == {"answers": [], "pending": [body["callId"]]}


async def test_T4_X2_tool_input_errors_are_the_hosted_texts(tmp_path: Path) -> None:
    async with mcp_session(tmp_path) as s:
        dup = await s.call_tool("ask_user_question", ask(QUESTION, QUESTION, timeout=5))
        assert dup.is_error is True
        assert text(dup) == 'Error: question id "db" must be unique within this call'
        assert dup.structured_content["code"] == "BAD_TOOL_INPUT"
        bad_timeout = await s.call_tool("ask_user_question", ask(timeout=0))
        assert text(bad_timeout) == (
            "Error: timeout must be -1 or a positive integer up to 2147483 seconds"
        )
        missing = await s.call_tool("ask_user_question", {})
        assert text(missing) == "Error: questions must be an array of question objects"
        empty = await s.call_tool("ask_user_question", {"questions": [], "timeout": 5})
        assert text(empty) == "Error: ask_user_question requires at least one question"
        bad_ids = await s.call_tool("get_answers", {"callIds": "call-1"})
        assert text(bad_ids) == "Error: callIds must be an array of strings" and bad_ids.is_error


async def test_S1_limits_are_checked_before_anything_is_logged(tmp_path: Path) -> None:
    marker = "TOO-LONG-" * 300  # 2,700 characters: over the 2,000 a question may have
    async with mcp_session(tmp_path) as s:
        result = await s.call_tool(
            "ask_user_question", ask({"id": "q", "question": marker}, timeout=5)
        )
        assert result.is_error is True
        assert text(result) == "Error: question q: question has 2700 characters; at most 2000"
        assert result.structured_content["code"] == "BAD_QUESTION"
    db = sqlite3.connect(tmp_path / "data" / "askbridge.db")
    try:
        stored = "".join(str(row) for row in db.execute("SELECT * FROM events"))
    finally:
        db.close()
    assert "TOO-LONG-TOO-LONG" not in stored and "tool/call" in stored


async def test_X5_approval_allow_deny_and_no_answerer(tmp_path: Path) -> None:
    tool_input = {"file_path": "src/app.py", "old_string": "a = 1", "new_string": "a = 2"}
    seen: list[Any] = []
    async with mcp_session(tmp_path, elicitation=accept_with({"q1": "Allow"}, seen)) as s:
        allowed = await s.call_tool("approval_prompt", {"tool_name": "Edit", "input": tool_input})
        assert json.loads(text(allowed)) == {"behavior": "allow", "updatedInput": tool_input}
        assert only_one_text(allowed)  # X5: Claude Code rejects any other shape
        assert seen[0].message == ("Allow Edit?\n\n`src/app.py`\n\n```diff\n-a = 1\n+a = 2\n```")
    async with mcp_session(tmp_path, elicitation=accept_with({"q1": "Deny"})) as s:
        denied = await s.call_tool("approval_prompt", {"tool_name": "Edit", "input": tool_input})
        assert json.loads(text(denied)) == {
            "behavior": "deny",
            "message": "The user denied this Edit call.",
        }
        assert only_one_text(denied)
    async with mcp_session(tmp_path, elicitation=respond("cancel")) as s:
        cancelled = await s.call_tool(
            "approval_prompt", {"tool_name": "Bash", "input": {"command": "ls"}}
        )
        body = json.loads(text(cancelled))
        assert body["behavior"] == "deny" and "the user cancelled" in body["message"]
    async with mcp_session(tmp_path) as s:  # X5: no answerer never allows
        alone = await s.call_tool(
            "approval_prompt", {"tool_name": "Bash", "input": {"command": "ls"}}
        )
        body = json.loads(text(alone))
        assert body["behavior"] == "deny" and only_one_text(alone)
        assert "no user-questions answerer accepted the request" in body["message"]
        broken = await s.call_tool("approval_prompt", {"tool_name": "Bash"})
        assert json.loads(text(broken))["behavior"] == "deny"


async def test_X5_exit_plan_mode_is_a_plan_review(tmp_path: Path) -> None:
    seen: list[Any] = []
    elicit = accept_with({"q1": "Approve plan"}, seen)
    plan_input = {"plan": "1. Do it\n2. Test it"}
    async with mcp_session(tmp_path, elicitation=elicit) as s:
        result = await s.call_tool(
            "approval_prompt", {"tool_name": "ExitPlanMode", "input": plan_input}
        )
        assert json.loads(text(result)) == {"behavior": "allow", "updatedInput": plan_input}
        assert only_one_text(result)
        assert seen[0].message == "Approve this plan?\n\n1. Do it\n2. Test it"
        labels = [o["const"] for o in seen[0].requested_schema["properties"]["q1"]["oneOf"]]
        assert labels == ["Approve plan", "Keep planning"]
        # Claude Code >= 2.1 sends {plan, planFilePath} only when the plan file was written.
        bare = await s.call_tool("approval_prompt", {"tool_name": "ExitPlanMode", "input": {}})
        assert only_one_text(bare)
        assert seen[1].message == "Approve this plan?\n\nThe agent gave no plan text"


async def test_X1_the_external_session_is_listed_with_its_calls(tmp_path: Path) -> None:
    async with mcp_session(
        tmp_path, elicitation=accept_with({"q1": "SQLite"}), name="claude-code"
    ) as s:
        await s.call_tool("ask_user_question", ask(timeout=30))
    data = str(tmp_path / "data")
    listing = await anyio.run_process([ASKBRIDGE, "sessions", "--data-dir", data], check=False)
    out = listing.stdout.decode()
    assert listing.returncode == 0, listing.stderr
    assert f"claude-code — {tmp_path}" in out
    assert "1 settled" in out
    session_id = out.split()[0]
    shown = await anyio.run_process([ASKBRIDGE, "sessions", "show", session_id, "--data-dir", data])
    text_out = shown.stdout.decode()
    assert "origin mcp" in text_out and "model external" in text_out, text_out
    assert "ask_user_question" in text_out


async def test_X1_a_2026_era_client_falls_back_to_the_handshake(tmp_path: Path) -> None:
    """The SDK's default `mode="auto"` probes server/discover first; askbridge serves the
    handshake era (elicitation needs server requests), so the client falls back."""
    async with Client(server_params(tmp_path)) as client:
        assert client.protocol_version == "2025-11-25"
        result = await client.call_tool("get_answers", {})
        assert json.loads(text(result)) == {"answers": [], "pending": []}


def test_mcp_help_and_bad_flags() -> None:
    helped = subprocess.run(
        [ASKBRIDGE, "mcp", "--help"], capture_output=True, text=True, timeout=30
    )
    assert helped.returncode == 0 and "--ask-timeout" in helped.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "askbridge.cli", "mcp", "--ask-timeout", "0"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and "askbridge mcp: error: argument --ask-timeout" in bad.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
async def test_S4_a_full_disk_fails_one_call_and_serving_goes_on(tmp_path: Path) -> None:
    mount_point = tmp_path / "mnt"
    mount_point.mkdir()
    mount = ["mount", "-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(mount_point)]
    await anyio.run_process(mount)
    try:
        async with mcp_session(mount_point, elicitation=accept_with({"q1": "SQLite"})) as s:
            first = await s.call_tool("ask_user_question", ask(timeout=30))
            assert first.is_error is False
            filler = await anyio.to_thread.run_sync(fill, mount_point)
            many = [{**QUESTION, "id": f"q{n}", "question": "x" * 1900} for n in range(20)]
            failed = await s.call_tool("ask_user_question", ask(*many, timeout=30))
            assert failed.is_error is True
            assert failed.structured_content["code"] == "STORE_ERROR"
            assert "database or disk is full" in text(failed)
            filler.unlink()
            again = await s.call_tool("ask_user_question", ask(timeout=30))
            assert json.loads(text(again)) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
    finally:
        await anyio.to_thread.run_sync(stop_host, mount_point / "data")  # auto: it holds files
        await anyio.run_process(["umount", str(mount_point)], check=False)
