"""An MCP agent asks, an editor answers: the real fan-out, in one process (X1–X6, M1–M3, L).

`bench` runs the host with both real doors over real pipes (see bench.py for
why in one process). Once `askbridge host` / `--host auto` lands these move to
two real processes (`askbridge mcp` and `askbridge serve` on one data
directory); the assertions stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench import CAPABLE, Agent, Editor, bench, db_question, settle, text_of

from askbridge.host.asking.external_followers import follow_external

ASK_TIMEOUT_S = 30


def ask_args(*questions: dict[str, Any], timeout: int | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"questions": list(questions) or [db_question()]}
    if timeout is not None:
        args["timeout"] = timeout
    return args


async def asked(editor: Editor, agent: Agent, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    call = agent.call_tool("ask_user_question", args)
    ask = await editor.request("userQuestions/ask")
    return call, ask


async def test_X1_X3_M2_an_editor_answers_the_agents_question(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent(elicitation=True)  # the editor comes first (X3)
        call, ask = await asked(editor, agent, ask_args(timeout=ASK_TIMEOUT_S))
        params = ask["params"]
        session_id = params["sessionId"]
        assert params["questions"] == [db_question()]
        assert params["wait"] == {"callId": params["wait"]["callId"], "timed": True}
        opened = await editor.notification(
            "userQuestions/didChange", lambda p: p["sessionId"] == session_id
        )
        assert opened["params"]["changes"][0]["state"] == "open"
        answer = {"answers": [{"id": "db", "selected": ["Postgres"]}]}
        editor.respond(ask["id"], answer)
        result = await agent.result(call)
        assert text_of(result) == '{"answers":[{"id":"db","selected":["Postgres"]}]}'
        assert result["structuredContent"] == answer and result["isError"] is False
        settled = await editor.notification(
            "userQuestions/didChange",
            lambda p: p["sessionId"] == session_id and p["changes"][0]["state"] == "settled",
        )
        assert settled["params"]["changes"][0]["answers"] == answer["answers"]
        # X1: the external session is a listed root session of the data directory.
        listed = await editor.result(editor.call("session/list", {}))
        entry = next(s for s in listed["sessions"] if s["sessionId"] == session_id)
        assert entry["title"] == "bench-agent — /work/project"
        info = next(i for i in await b.host.list_sessions() if i.session_id == session_id)
        assert info.origin == "mcp"


async def test_X4_L4_late_reply_from_the_editor_reaches_get_answers_once(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        call, ask = await asked(editor, agent, ask_args(timeout=5))
        session_id, call_id = ask["params"]["sessionId"], ask["params"]["wait"]["callId"]
        await settle()
        b.clock.advance(5000)  # TW6: the unclaimed deadline passes
        result = await agent.result(call)
        pending = json.loads(text_of(result))
        assert list(pending) == ["pending", "callId", "message"]
        assert pending["callId"] == call_id and "get_answers" in pending["message"]
        assert result["structuredContent"] == pending
        cancel = await editor.notification("$/cancelRequest")
        assert cancel["params"]["id"] == ask["id"]
        nothing = await agent.result(agent.call_tool("get_answers", {}))
        assert json.loads(text_of(nothing)) == {"answers": [], "pending": [call_id]}
        batch = [{"id": "db", "selected": ["SQLite"]}]
        late = {"sessionId": session_id, "callId": call_id, "answer": {"answers": batch}}
        assert await editor.result(editor.call("userQuestions/answer", late)) is True
        got = await agent.result(agent.call_tool("get_answers", {"callIds": [call_id]}))
        body = json.loads(text_of(got))
        assert body == {
            "answers": [{"callId": call_id, "questions": [db_question()], "answers": batch}],
            "pending": [],
        }
        assert got["structuredContent"] == body
        again = await agent.result(agent.call_tool("get_answers", {}))
        assert json.loads(text_of(again)) == {"answers": [], "pending": []}  # delivered once
        # L6: settled, so a second late reply is refused.
        assert await editor.result(editor.call("userQuestions/answer", late)) is False


async def test_X4_undelivered_late_reply_rides_on_the_next_ask(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        first, ask = await asked(editor, agent, ask_args(timeout=5))
        session_id, call_id = ask["params"]["sessionId"], ask["params"]["wait"]["callId"]
        await settle()
        b.clock.advance(5000)
        await agent.result(first)
        batch = [{"id": "db", "selected": [], "custom": "DuckDB"}]
        late = {"sessionId": session_id, "callId": call_id, "answer": {"answers": batch}}
        assert await editor.result(editor.call("userQuestions/answer", late)) is True
        second, ask2 = await asked(editor, agent, ask_args(db_question("next"), timeout=5))
        answer = {"answers": [{"id": "next", "selected": ["SQLite"]}]}
        editor.respond(ask2["id"], answer)
        result = await agent.result(second)
        assert json.loads(text_of(result)) == answer
        ride = json.loads(text_of(result, 1))
        expected = {
            "answers": [{"callId": call_id, "questions": [db_question()], "answers": batch}],
            "pending": [],
        }
        assert ride == expected
        assert result["structuredContent"] == {**answer, "lateReplies": expected}
        empty = await agent.result(agent.call_tool("get_answers", {}))
        assert json.loads(text_of(empty)) == {"answers": [], "pending": []}


async def test_X6_connection_end_leaves_the_question_answerable_in_the_editor(
    tmp_path: Path,
) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        _, ask = await asked(editor, agent, ask_args(timeout=-1))
        session_id, call_id = ask["params"]["sessionId"], ask["params"]["wait"]["callId"]
        assert ask["params"]["wait"] == {"callId": call_id}
        agent.close()  # the agent's process is gone: end of input
        cancel = await editor.notification("$/cancelRequest")
        assert cancel["params"]["id"] == ask["id"]
        continued = await editor.notification(
            "userQuestions/didChange",
            lambda p: p["sessionId"] == session_id and p["changes"][0]["state"] == "continued",
        )
        assert continued["params"]["changes"] == [{"callId": call_id, "state": "continued"}]
        view = await editor.result(editor.call("userQuestions/list", {"sessionId": session_id}))
        assert view["active"][0]["callId"] == call_id
        late = {
            "sessionId": session_id,
            "callId": call_id,
            "answer": {"answers": [{"id": "db", "selected": ["SQLite"]}]},
        }
        assert await editor.result(editor.call("userQuestions/answer", late)) is True
        # A new connection is a new external session: it sees nothing of the old one.
        again = await b.agent()
        got = await again.result(again.call_tool("get_answers", {}))
        assert json.loads(text_of(got)) == {"answers": [], "pending": []}


async def test_X5_approval_is_decided_in_the_editor(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent(elicitation=True)
        tool_input = {"command": "rm -rf build", "description": "Clean the build"}
        call = agent.call_tool("approval_prompt", {"tool_name": "Bash", "input": tool_input})
        ask = await editor.request("userQuestions/ask")
        (question,) = ask["params"]["questions"]
        assert "wait" not in ask["params"]  # V3: an approval is a blocking ask
        assert question["intent"] == {
            "kind": "approval",
            "approve": "Allow",
            "reject": "Deny",
            "subject": {"name": "Bash"},
        }
        assert question["detail"] == "Clean the build\n\n```sh\nrm -rf build\n```"
        assert [o["label"] for o in question["options"]] == ["Allow", "Deny"]
        editor.respond(ask["id"], {"answers": [{"id": question["id"], "selected": ["Allow"]}]})
        result = await agent.result(call)
        assert json.loads(text_of(result)) == {"behavior": "allow", "updatedInput": tool_input}


async def test_X5_plan_review_feedback_denies_with_the_users_words(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        plan = "1. Add the table\n2. Migrate"
        call = agent.call_tool(
            "approval_prompt", {"tool_name": "ExitPlanMode", "input": {"plan": plan}}
        )
        ask = await editor.request("userQuestions/ask")
        (question,) = ask["params"]["questions"]
        assert question["intent"] == {"kind": "plan-review", "approve": "Approve plan"}
        assert question["detail"] == plan
        feedback = {"id": question["id"], "selected": [], "custom": "Also add an index"}
        editor.respond(ask["id"], {"answers": [feedback]})
        result = await agent.result(call)
        assert json.loads(text_of(result)) == {"behavior": "deny", "message": "Also add an index"}


async def test_M3_an_editor_that_attaches_later_gets_the_open_question(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        agent = await b.agent()  # no editor yet, no elicitation: the timed ask waits (TW8)
        call = agent.call_tool("ask_user_question", ask_args(timeout=ASK_TIMEOUT_S))
        await settle()
        editor = await b.editor()
        follow_external(b.host, next(c for c in b.host.clients.values() if c.door == "lsp"))
        ask = await editor.request("userQuestions/ask")
        editor.respond(ask["id"], {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        result = await agent.result(call)
        assert json.loads(text_of(result)) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}


async def test_X3_editor_answers_while_the_elicitation_is_withdrawn(tmp_path: Path) -> None:
    """No editor at first: the MCP client's form asks; an editor's answer wins and the form
    is cancelled (M2, A9)."""
    async with bench(tmp_path) as b:
        agent = await b.agent(elicitation=True)
        call = agent.call_tool("ask_user_question", ask_args(timeout=ASK_TIMEOUT_S))
        form = await agent.request("elicitation/create")
        assert form["params"]["mode"] == "form"
        editor = await b.editor()
        follow_external(b.host, next(c for c in b.host.clients.values() if c.door == "lsp"))
        ask = await editor.request("userQuestions/ask")
        editor.respond(ask["id"], {"answers": [{"id": "db", "selected": ["Postgres"]}]})
        cancelled = await agent.notification("notifications/cancelled")
        assert cancelled["params"]["requestId"] == form["id"]
        result = await agent.result(call)
        assert json.loads(text_of(result)) == {"answers": [{"id": "db", "selected": ["Postgres"]}]}


async def test_M1_an_editor_gets_the_open_question_only_after_its_initialize_result(
    tmp_path: Path,
) -> None:
    """LSP allows no server request before the InitializeResult: the external session's
    open card reaches a capable editor right after it, not ahead of it."""
    async with bench(tmp_path) as b:
        agent = await b.agent()
        call = agent.call_tool("ask_user_question", ask_args(timeout=ASK_TIMEOUT_S))
        await settle()
        editor = await b.editor(initialize=False)
        init = editor.call("initialize", {"processId": None, "capabilities": CAPABLE})
        first = await editor.receive()
        assert first.get("id") == init and "result" in first, first
        ask = await editor.request("userQuestions/ask")
        editor.respond(ask["id"], {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        result = await agent.result(call)
        assert json.loads(text_of(result)) == {"answers": [{"id": "db", "selected": ["SQLite"]}]}
