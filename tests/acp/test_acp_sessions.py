"""ACP front door: initialize, session/new settings, session/load replay after SIGKILL.

Every test drives a real `askbridge acp` process over real pipes with the
SDK's client side (acp_harness.py). Rule ids: protocol.md "ACP front door"
(ACP-init, ACP-new, ACP-load), behavior.md P7, L1, L4, D1.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from acp.exceptions import RequestError
from acp_harness import (
    RecordingClient,
    ask_step,
    capabilities,
    held_ask,
    open_session,
    prompt_until_lost,
    question,
    script,
    start_agent,
)

from askbridge.host.store.datadir import open_store_read_only


async def _header(data_dir: Path, session_id: str) -> dict[str, Any]:
    store = open_store_read_only(data_dir)
    try:
        return (await store.load(session_id))[0]
    finally:
        await store.close()


async def test_acp_init_and_new_session_reads_only_meta_askbridge(tmp_path: Path) -> None:
    """ACP-init, ACP-new: the initialize result; `_meta.askbridge` settings merged over the
    flags; other `_meta` keys (even `cwd`) never override the params; invalid → -32602."""
    client = RecordingClient()
    flags = ("--ask-mode", "timed", "--ask-timeout", "60")
    async with start_agent(client, tmp_path / "data", *flags) as (conn, _proc):
        init = await conn._conn.send_request("initialize", {"protocolVersion": 1})
        assert init == {
            "protocolVersion": 1,
            "agentCapabilities": {"loadSession": True, "_meta": {"askbridge": {"version": 1}}},
            "agentInfo": {"name": "askbridge", "version": init["agentInfo"]["version"]},
        }
        raw = conn._conn.send_request
        meta = {
            "cwd": "/evil",
            "mcpServers": "x",
            "askbridge": {"askUserQuestion": {"timeout": 30}},
        }
        first = await raw("session/new", {"cwd": str(tmp_path), "mcpServers": [], "_meta": meta})
        second = await conn.new_session(
            cwd=str(tmp_path), mcp_servers=[], askbridge={"askUserQuestion": {"mode": "legacy"}}
        )
        plain = await conn.new_session(cwd=str(tmp_path), mcp_servers=[], other={"x": 1})

        bad_settings = [
            ({"askUserQuestion": {"timeout": 0}}, "_meta.askbridge.askUserQuestion.timeout"),
            ({"askUserQuestion": {"mode": "sometimes"}}, "_meta.askbridge.askUserQuestion.mode"),
            ({"model": {"kind": "oracle"}}, "_meta.askbridge.model.kind"),
            ("not an object", "_meta.askbridge"),
        ]
        for settings, field in bad_settings:
            with pytest.raises(RequestError) as caught:
                await conn.new_session(cwd=str(tmp_path), mcp_servers=[], askbridge=settings)
            assert caught.value.code == -32602, settings
            assert [e["field"] for e in caught.value.data["errors"]] == [field]
        with pytest.raises(RequestError) as missing:
            await raw("session/new", {"mcpServers": []})
        assert missing.value.code == -32602  # cwd is required by ACP

    header = await _header(tmp_path / "data", first["sessionId"])
    assert header["cwd"] == str(tmp_path)
    assert header["askUserQuestion"] == {"mode": "timed", "timeout": 30}
    assert (await _header(tmp_path / "data", second.session_id))["askUserQuestion"] == {
        "mode": "legacy",
        "timeout": 60,
    }
    assert (await _header(tmp_path / "data", plain.session_id))["askUserQuestion"] == {
        "mode": "timed",
        "timeout": 60,
    }


async def test_acp_load_replays_after_sigkill_mid_question_then_late_reply(tmp_path: Path) -> None:
    """ACP-load, P7, L1, L4: after SIGKILL during an open timed question, session/load
    replays prompt, tool call and its repaired result, then `_askbridge/didChange`
    (continued), then answers `{}`; a late reply through `_askbridge/answer` starts an
    inbox turn whose admitted reply is a user_message_chunk with its source."""
    data = tmp_path / "data"
    model = script(ask_step("call-1", question("db", "SQLite", "Postgres")), {"text": "thanks"})
    client = RecordingClient()
    asked, _never = held_ask(client)
    async with start_agent(client, data, "--ask-mode", "timed", model=model) as (conn, proc):
        session_id = await open_session(conn, tmp_path, capabilities(askbridge=True))
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_lost, conn, session_id, "Pick a db")
            with anyio.fail_after(15):
                await asked.wait()
            proc.kill()  # SIGKILL while the question is open
            await proc.wait()
            tg.cancel_scope.cancel()

    client = RecordingClient()
    async with start_agent(client, data, "--ask-mode", "timed", model=model) as (conn, _proc):
        await conn.initialize(protocol_version=1, client_capabilities=capabilities(askbridge=True))
        await conn.load_session(cwd=str(tmp_path), session_id=session_id, mcp_servers=[])
        kinds = [
            m["params"]["update"]["sessionUpdate"]
            if m.get("method") == "session/update"
            else m.get("method", "response")
            for m in client.wire
        ]
        assert kinds == [
            "response",  # initialize
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "_askbridge/didChange",
            "response",  # session/load: after the replay and the view
        ]
        prompt_chunk, call, result = client.updates()
        assert prompt_chunk["content"] == {"type": "text", "text": "Pick a db"}
        assert call["toolCallId"] == "call-1" and call["status"] == "in_progress"
        assert call["rawInput"]["questions"][0]["id"] == "db"
        assert result["status"] == "failed"
        assert result["_meta"] == {
            "askbridge": {"error": {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}}
        }
        assert result["content"][0]["content"]["text"].startswith("Error: ")
        (change,) = client.ext("didChange")
        assert [(a["callId"], a["state"]) for a in change["changes"]] == [("call-1", "continued")]

        reply = {"answers": [{"id": "db", "selected": ["Postgres"]}]}
        params = {"sessionId": session_id, "callId": "call-1", "answer": reply}
        assert await conn.ext_method("askbridge/answer", params) == {"accepted": True}
        ended = await client.wait_for(lambda: client.turns("ended"))
        (started,) = client.turns("started")
        assert started["cause"] == "inbox" and ended[0]["stopReason"] == "end_turn"
        admitted = client.updates("user_message_chunk")[-1]
        assert admitted["_meta"] == {
            "askbridge": {
                "source": {"kind": "user-question-reply", "callId": "call-1", "outcome": "answered"}
            }
        }
        assert '"kind":"answer_to_pending_question"' in admitted["content"]["text"]
        agent_text = client.updates("agent_message_chunk")[-1]
        assert agent_text["content"]["text"] == "thanks"
        assert await conn.ext_method("askbridge/answer", params) == {"accepted": False}  # L6


async def test_acp_end_of_input_mid_question_exits_zero_without_answerer_failure(
    tmp_path: Path,
) -> None:
    """ACP-eof (protocol.md "Lifecycle", D1): the client closing stdin while a question is
    open ends the turn (cancelled) and the process exits 0; the dropped connection is
    never mistaken for an answerer failure (no PROVIDER_ERROR, the model is not asked
    again): the call ends outcome-unknown and stays answerable (M6, P3)."""
    data = tmp_path / "data"
    model = script(ask_step("call-1", question("db", "a", "b")), {"text": "never"})
    client = RecordingClient()
    asked, _never = held_ask(client)
    async with start_agent(client, data, "--ask-mode", "timed", model=model) as (conn, proc):
        session_id = await open_session(conn, tmp_path, capabilities(askbridge=True))
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_until_lost, conn, session_id, "Pick")
            with anyio.fail_after(15):
                await asked.wait()
            tg.cancel_scope.cancel()
    assert proc.returncode == 0  # the SDK closed stdin; no terminate was needed

    store = open_store_read_only(data)
    try:
        events = await store.load(session_id)
    finally:
        await store.close()
    [result] = [e for e in events if e["type"] == "tool/result"]
    assert result["error"] == {"name": "ToolError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert events[-1] == {"type": "turn/end", "turnId": "t-1", "stopReason": "cancelled"}
    assert not [e for e in events if e["type"] == "assistant/message" and e["text"] == "never"]
