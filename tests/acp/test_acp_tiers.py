"""ACP front door: the question tiers, each against a real `askbridge acp` process.

Tier 1 `_askbridge/ask` (ACP-q1), tier 2 form elicitation (ACP-q2), tier 3
`session/request_permission` for approval intents (ACP-q3), tier 4 decline
(ACP-q4: NO_PROVIDER for blocking asks). Rule ids: protocol.md "ACP front
door"; behavior.md V4, V8, W1, E2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from acp import text_block
from acp_harness import (
    RecordingClient,
    ask_step,
    capabilities,
    error_of,
    last_request,
    open_session,
    question,
    script,
    start_agent,
)

APPROVAL = {
    "id": "apply",
    "question": "Apply the patch?",
    "header": "Patch",
    "detail": "--- a\n+++ b",
    "options": [{"label": "Apply"}, {"label": "Always apply"}, {"label": "Skip"}],
    "intent": {"kind": "approval", "approve": "Apply", "reject": "Skip", "always": "Always apply"},
}


OTHER_ONE = {
    "type": "string",
    "title": "Other",
    "description": "Your own answer (replaces the choice)",
}
OTHER_MANY = {
    "type": "string",
    "title": "Other",
    "description": "Your own answer (added to the choices)",
}


async def test_acp_q1_extension_ask_multi_select_and_other(tmp_path: Path) -> None:
    """ACP-q1, V4, V8: `_askbridge/ask` carries the batch (after its tool_call update);
    a custom answer replaces a single choice and accompanies a multi-select one; a reply
    that breaks V8 is BAD_ANSWER; an ASK_CANCELLED error reply keeps its code (E2)."""
    db = question("db", "SQLite", "Postgres", header="Setup")
    langs = question("langs", "py", "rs", "go", multi_select=True)
    model = script(
        ask_step("call-1", db, langs),
        {"text": "noted"},
        ask_step("call-2", question("os", "linux")),
        ask_step("call-3", question("ci", "yes")),
    )
    client = RecordingClient()
    replies: list[Any] = [
        {
            "answers": [
                {"id": "db", "selected": [], "custom": "DuckDB"},
                {"id": "langs", "selected": ["py", "rs"], "custom": "zig"},
            ]
        },
        {"answers": [{"id": "os", "selected": ["windows"]}]},  # not an option: V8
    ]

    async def on_ask(params: dict[str, Any]) -> Any:
        if replies:
            return replies.pop(0)
        from acp.exceptions import RequestError

        raise RequestError(
            -32000, "dismissed", {"name": "UserQuestionError", "code": "ASK_CANCELLED"}
        )

    client.on_ask = on_ask
    async with start_agent(client, tmp_path / "d", model=model) as (conn, _proc):
        sid = await open_session(conn, tmp_path, capabilities(askbridge=True))
        first = await conn.prompt(session_id=sid, prompt=[text_block("set up")])
        assert first.stop_reason == "end_turn"
        second = await conn.prompt(session_id=sid, prompt=[text_block("more")])
        assert second.stop_reason == "end_turn"

    asks = [m for m in client.wire if m.get("method") == "_askbridge/ask"]
    assert len(asks) == 3
    params = asks[0]["params"]
    assert params["sessionId"] == sid and params["agentId"].startswith("a-")
    assert "wait" not in params  # legacy mode: a blocking ask
    assert [q["id"] for q in params["questions"]] == ["db", "langs"]
    assert params["questions"][1]["multiSelect"] is True
    assert params["questions"][0]["header"] == "Setup"
    # the tool_call update is on the wire before the question it causes
    call_at = next(
        i
        for i, m in enumerate(client.wire)
        if m.get("method") == "session/update"
        and m["params"]["update"]["sessionUpdate"] == "tool_call"
    )
    assert call_at < client.wire.index(asks[0])

    text = client.tool_result("call-1")["content"][0]["content"]["text"]  # type: ignore[index]
    assert json.loads(text) == {
        "answers": [
            {"id": "db", "selected": [], "custom": "DuckDB"},
            {"id": "langs", "selected": ["py", "rs"], "custom": "zig"},
        ]
    }
    assert error_of(client.tool_result("call-2")) == "BAD_ANSWER"  # type: ignore[arg-type]
    assert error_of(client.tool_result("call-3")) == "ASK_CANCELLED"  # type: ignore[arg-type]
    started = [t["cause"] for t in client.turns("started")]
    ended = [t["stopReason"] for t in client.turns("ended")]
    assert started == ["prompt", "prompt"] and ended == ["end_turn", "end_turn"]


async def test_acp_q2_F1_F2_F3_form_elicitation_schema_answer_and_decline(tmp_path: Path) -> None:
    """ACP-q2, V8, F1–F3: one session-scoped form per batch with the documented message and
    schema (Other replaces a single choice, is added to a multi-select's); accept → the answer
    (a multi-select's Other is custom beside the labels ticked); decline → ASK_DECLINED."""
    db = question("db", "SQLite", "Postgres", header="Setup")
    db["options"][0]["description"] = "embedded"
    langs = question("langs", "py", "rs", multi_select=True)
    notes = question("notes")
    model = script(
        ask_step("call-1", db, langs, notes),
        ask_step("call-2", question("os", "linux")),
    )
    client = RecordingClient()
    replies: list[Any] = [
        {
            "action": "accept",
            "content": {
                "q1": "SQLite",
                "q1_other": "",
                "q2": ["rs"],
                "q2_other": "zig",
                "q3": "ship it",
            },
        },
        {"action": "decline"},
        {"action": "accept", "content": {"q1": "Skip"}},
    ]

    async def on_elicitation(request: dict[str, Any]) -> Any:
        return replies.pop(0)

    client.on_elicitation = on_elicitation
    flags = ("--ask-mode", "timed")
    # The driver (the same door on a ManualClock) also lets a programmatic caller ask with a
    # detail, which the model's tool schema never carries (T2).
    async with start_agent(
        client, tmp_path / "d", *flags, model=model, unstable=True, driver=True
    ) as (conn, _proc):
        sid = await open_session(conn, tmp_path, capabilities(form=True))
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
        approval = await conn.ext_method(
            "askbridgeTest/ask", {"sessionId": sid, "questions": [APPROVAL]}
        )
    assert approval == {"answer": {"answers": [{"id": "apply", "selected": ["Skip"]}]}}
    forms = [m["params"] for m in client.wire if m.get("method") == "elicitation/create"]
    assert forms[2]["message"] == "Apply the patch?\n\n--- a\n+++ b"  # F1: plain text
    assert "toolCallId" not in forms[2]  # a programmatic ask has no tool call

    form = next(m["params"] for m in client.wire if m.get("method") == "elicitation/create")
    assert form["mode"] == "form" and form["sessionId"] == sid and form["toolCallId"] == "call-1"
    assert form["message"] == "3 questions\n1. Which db?\n2. Which langs?\n3. Which notes?"
    schema = form["requestedSchema"]
    assert schema["type"] == "object" and schema["required"] == []
    assert schema["properties"] == {
        "q1": {
            "type": "string",
            "title": "Setup",
            "description": "Which db?",
            "oneOf": [
                {"const": "SQLite", "title": "SQLite", "description": "embedded"},
                {"const": "Postgres", "title": "Postgres"},
            ],
        },
        "q1_other": OTHER_ONE,
        "q2": {
            "type": "array",
            "title": "Which langs?",
            "items": {"anyOf": [{"const": "py", "title": "py"}, {"const": "rs", "title": "rs"}]},
        },
        "q2_other": OTHER_MANY,
        "q3": {"type": "string", "title": "Which notes?"},
    }
    assert list(schema["properties"]) == sorted(schema["properties"])  # F2: ask order
    text = client.tool_result("call-1")["content"][0]["content"]["text"]  # type: ignore[index]
    assert json.loads(text) == {
        "answers": [
            {"id": "db", "selected": ["SQLite"]},
            {"id": "langs", "selected": ["rs"], "custom": "zig"},
            {"id": "notes", "selected": [], "custom": "ship it"},
        ]
    }
    assert error_of(client.tool_result("call-2")) == "ASK_DECLINED"  # type: ignore[arg-type]
    assert not client.ext("ask")


@pytest.mark.filterwarnings("ignore:The method elicitation/create is part of the unstable")
async def test_acp_q2_method_not_found_falls_to_next_tier_q4_no_provider(tmp_path: Path) -> None:
    """ACP-q2, ACP-q4, W1: a client that declares elicitation.form but answers -32601 (the
    SDK without its unstable protocol) is treated as not declaring it; with nothing left
    the blocking ask is declined: NO_PROVIDER, and the turn goes on."""
    model = script(
        ask_step("call-1", question("db", "a", "b")),
        ask_step("call-2", question("os", "a", "b")),
        {"text": "without you"},
    )
    client = RecordingClient()
    async with start_agent(client, tmp_path / "d", model=model, unstable=False) as (conn, _p):
        sid = await open_session(conn, tmp_path, capabilities(form=True))
        reply = await conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert reply.stop_reason == "end_turn"
    assert error_of(client.tool_result("call-1")) == "NO_PROVIDER"  # type: ignore[arg-type]
    assert error_of(client.tool_result("call-2")) == "NO_PROVIDER"  # type: ignore[arg-type]
    assert len(client.messages("elicitation/create")) == 1  # the -32601 is remembered
    assert client.updates("agent_message_chunk")[-1]["content"]["text"] == "without you"


async def test_acp_q3_request_permission_for_approval_only(tmp_path: Path) -> None:
    """ACP-q3, ACP-q4: with neither extension nor forms, an approval intent (programmatic
    caller, via the test driver) becomes session/request_permission with approve/always/
    reject options; the chosen label is the answer; `cancelled` → ASK_CANCELLED, or
    ASK_ABORTED after session/cancel; a non-approval batch is declined (NO_PROVIDER)."""
    client = RecordingClient()
    outcomes: list[str] = ["always", "cancelled", "cancel-turn"]
    conn_box: list[Any] = []

    async def on_permission(request: dict[str, Any]) -> Any:
        choice = outcomes.pop(0)
        if choice == "cancel-turn":  # as an ACP client does: session/cancel, then `cancelled`
            await conn_box[0].cancel(session_id=request["sessionId"])
            return {"outcome": {"outcome": "cancelled"}}
        if choice == "cancelled":
            return {"outcome": {"outcome": "cancelled"}}
        return {"outcome": {"outcome": "selected", "optionId": choice}}

    client.on_permission = on_permission
    async with start_agent(client, tmp_path / "d", driver=True) as (conn, _proc):
        conn_box.append(conn)
        sid = await open_session(conn, tmp_path)
        ask = {"sessionId": sid, "questions": [APPROVAL]}
        first = await conn.ext_method("askbridgeTest/ask", ask)
        second = await conn.ext_method("askbridgeTest/ask", ask)
        third = await conn.ext_method("askbridgeTest/ask", ask)
        plain = {"sessionId": sid, "questions": [question("db", "a", "b")]}
        declined = await conn.ext_method("askbridgeTest/ask", plain)

    assert first == {"answer": {"answers": [{"id": "apply", "selected": ["Always apply"]}]}}
    assert second == {"error": {"name": "UserQuestionError", "code": "ASK_CANCELLED"}}
    assert third == {"error": {"name": "UserQuestionError", "code": "ASK_ABORTED"}}
    assert declined == {"error": {"name": "UserQuestionError", "code": "NO_PROVIDER"}}
    request = last_request(client, "session/request_permission")
    assert request["sessionId"] == sid
    assert request["options"] == [
        {"optionId": "approve", "name": "Apply", "kind": "allow_once"},
        {"optionId": "always", "name": "Always apply", "kind": "allow_always"},
        {"optionId": "reject", "name": "Skip", "kind": "reject_once"},
    ]
    tool_call = request["toolCall"]
    assert tool_call["title"] == "[Patch] Apply the patch?"
    assert tool_call["content"] == [
        {"type": "content", "content": {"type": "text", "text": "--- a\n+++ b"}}
    ]
    assert len(client.messages("session/request_permission")) == 3


async def test_acp_q2_a_legacy_mode_form_names_its_tool_call_too(tmp_path: Path) -> None:
    """ACP-q2: `toolCallId` on the form in legacy mode as in timed mode (protocol.md), though a
    legacy ask has no wait to take it from."""
    model = script(ask_step("call-7", question("db", "SQLite", "Postgres")), {"text": "ok"})
    client = RecordingClient()

    async def on_elicitation(request: dict[str, Any]) -> Any:
        return {"action": "accept", "content": {"q1": "Postgres"}}

    client.on_elicitation = on_elicitation
    async with start_agent(client, tmp_path / "d", model=model, unstable=True) as (conn, _proc):
        sid = await open_session(conn, tmp_path, capabilities(form=True))
        assert (
            await conn.prompt(session_id=sid, prompt=[text_block("go")])
        ).stop_reason == "end_turn"
    [form] = [m["params"] for m in client.wire if m.get("method") == "elicitation/create"]
    assert form["toolCallId"] == "call-7"
    assert json.loads(client.tool_result("call-7")["content"][0]["content"]["text"]) == {
        "answers": [{"id": "db", "selected": ["Postgres"]}]
    }


@pytest.mark.parametrize("timeout", [600, -1])
async def test_F3_acp_form_cancel_is_pending_at_once_when_timed_else_ASK_CANCELLED(
    tmp_path: Path, timeout: int
) -> None:
    """F3, X3: a cancelled form is not the user's answer: a timed ask returns pending at
    once (not after 600 s) and stays continued; a blocking ask ends ASK_CANCELLED."""
    model = script(ask_step("call-1", question("db", "a", "b"), timeout=timeout), {"text": "ok"})
    client = RecordingClient()

    async def on_elicitation(request: dict[str, Any]) -> Any:
        return {"action": "cancel"}

    client.on_elicitation = on_elicitation
    flags = ("--ask-mode", "timed")
    async with start_agent(client, tmp_path / "d", *flags, model=model, unstable=True) as (
        conn,
        _proc,
    ):
        sid = await open_session(conn, tmp_path, capabilities(form=True))
        with anyio.fail_after(20):
            await conn.prompt(session_id=sid, prompt=[text_block("go")])
        view = await conn.ext_method("askbridge/list", {"sessionId": sid})
    result = client.tool_result("call-1")
    assert result is not None
    if timeout == -1:
        assert error_of(result) == "ASK_CANCELLED"
        assert view["active"] == []
    else:
        assert json.loads(result["content"][0]["content"]["text"])["pending"] is True
        assert [(a["callId"], a["state"]) for a in view["active"]] == [("call-1", "continued")]
