"""The external session on the host side (X1, X5 rendering, P7, M6) and what editors may do to it."""

from __future__ import annotations

import json
from pathlib import Path

from bench import bench, db_question, settle, text_of

from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.store.datadir import open_store
from askbridge.mcp.approval import approval_question, fenced, render_input


async def test_X1_P7_an_external_session_reloads_without_a_model(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": -1})
        ask = await editor.request("userQuestions/ask")
        session_id, call_id = ask["params"]["sessionId"], ask["params"]["wait"]["callId"]
        session = b.host.sessions[session_id]
        assert not session.runs_turns  # an external session: its agent runs outside
        assert session.header["model"] == {"kind": "external"}
        assert session.header["origin"] == "mcp"
        # The host is stopped under the open ask (as a crash would leave it, but cleanly).
    store = open_store(b.data_dir)
    try:
        events = await store.load(session_id)
        kinds = [e["type"] for e in events]
        assert kinds[:3] == [ev.SESSION_HEADER, ev.REQUEST_HEADER, ev.TOOL_CALL]
        # A call the agent made just before a crash: logged, never answered.
        crashed = ev.tool_call("call-crash", "ask_user_question", {"questions": [db_question("c")]})
        await store.append(session_id, [crashed])
        async with Host(store) as host:
            loaded = await host.load_session(session_id)
            assert not loaded.runs_turns
            view = loaded.projection.view_dict()
            assert [(a["callId"], a["state"]) for a in view["active"]] == [
                (call_id, "continued"),
                ("call-crash", "continued"),  # P7: repaired outcome-unknown
            ]
            assert not loaded.running  # no turn is ever run for it
            assert [i.origin for i in await host.list_sessions()] == ["mcp"]
    finally:
        await store.close()


async def test_X1_an_editor_cannot_prompt_an_external_session_but_can_cancel_its_asks(
    tmp_path: Path,
) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        call = agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": 30})
        ask = await editor.request("userQuestions/ask")
        session_id = ask["params"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "hi"}]}
        refused = await editor.response(editor.call("session/prompt", prompt))
        assert refused["error"]["code"] == -32000
        assert refused["error"]["data"] == {"name": "SessionError", "code": "EXTERNAL_SESSION"}
        editor.notify("session/cancel", {"sessionId": session_id})
        result = await agent.result(call)
        assert result["isError"] is True
        assert text_of(result) == "Error: ask_user_question was aborted before the user answered"
        # The next call runs with a fresh signal: cancelling once does not poison the session.
        again = agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": 30})
        ask2 = await editor.request("userQuestions/ask")
        editor.respond(ask2["id"], {"answers": [{"id": "db", "selected": ["SQLite"]}]})
        assert json.loads(text_of(await agent.result(again)))["answers"][0]["selected"] == [
            "SQLite"
        ]


async def test_M6_the_host_stopping_leaves_open_questions_continued(tmp_path: Path) -> None:
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": 30})
        ask = await editor.request("userQuestions/ask")
        session_id = ask["params"]["sessionId"]
        await settle()
    store = open_store(b.data_dir)
    try:
        last = (await store.load(session_id))[-1]
        assert last["type"] == ev.TOOL_RESULT
        assert last["error"]["code"] == "TOOL_OUTCOME_UNKNOWN"
    finally:
        await store.close()


async def test_P3_X1_an_external_sessions_results_are_logged_with_their_kind(
    tmp_path: Path,
) -> None:
    """The log says what each ask came to (answered with its batch, pending), as a hosted
    session's does, so the projection never reads the model's text back."""
    async with bench(tmp_path) as b:
        editor = await b.editor()
        agent = await b.agent()
        answered = agent.call_tool("ask_user_question", {"questions": [db_question()]})
        ask = await editor.request("userQuestions/ask")
        session_id = ask["params"]["sessionId"]
        editor.respond(ask["id"], {"answers": [{"id": "db", "selected": ["Postgres"]}]})
        await agent.result(answered)
        timed = agent.call_tool("ask_user_question", {"questions": [db_question()], "timeout": 1})
        await editor.request("userQuestions/ask")  # left unanswered: its 1 s runs out
        await settle()
        b.clock.advance(1000)
        await agent.result(timed)
    store = open_store(b.data_dir)
    try:
        results = [e for e in await store.load(session_id) if e["type"] == ev.TOOL_RESULT]
    finally:
        await store.close()
    assert [(r.get("outcome"), r.get("answers")) for r in results] == [
        ("answered", [{"id": "db", "selected": ["Postgres"]}]),
        ("pending", None),
    ]


def test_X5_rendering_of_tool_inputs() -> None:
    assert fenced("a ``` b", "sh") == "````sh\na ``` b\n````"
    written = render_input("Write", {"file_path": "x/app.py", "content": "print(1)"})
    assert written == "`x/app.py`\n\n```python\nprint(1)\n```"
    multi = render_input(
        "MultiEdit",
        {"file_path": "f.txt", "edits": [{"old_string": "a", "new_string": "b"}]},
    )
    assert multi == "`f.txt`\n\n```diff\n-a\n+b\n```"
    other = render_input("WebFetch", {"url": "https://example.com"})
    assert other == '```json\n{\n  "url": "https://example.com"\n}\n```'
    huge = approval_question("Write", {"file_path": "big.txt", "content": "x" * 100_000})
    assert huge.detail is not None and len(huge.detail) == 65_536
    assert huge.detail.endswith("more characters not shown)")
