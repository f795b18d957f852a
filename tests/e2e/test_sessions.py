"""protocol.md "Sessions": session/new, load, list, prompt, cancel, update kinds, lazy loading.

Each test drives the real `askbridge serve` with the public test client
(`askbridge_client` fixture); restarts reuse the fixture's data directory.
"""

from __future__ import annotations

import json
import re
from typing import Any

import anyio
import pytest
from e2e_scripts import (
    DB_QUESTION,
    SQLITE,
    ask_step,
    script,
    text_step,
    tool_text,
)

from askbridge.jsonrpc import RpcResponseError

pytestmark = pytest.mark.timeout(60)

ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


async def expect_rpc_error(client: Any, method: str, params: Any) -> RpcResponseError:
    with pytest.raises(RpcResponseError) as info:
        await client.request(method, params)
    return info.value


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"askUserQuestion": {"timeout": 0}}, "askUserQuestion.timeout"),
        ({"askUserQuestion": {"timeout": -2}}, "askUserQuestion.timeout"),
        ({"askUserQuestion": {"timeout": 2147484}}, "askUserQuestion.timeout"),
        ({"askUserQuestion": {"timeout": "30"}}, "askUserQuestion.timeout"),
        ({"model": {"kind": "nope"}}, "model.kind"),
        ({"model": {"steps": []}}, "model.kind"),
    ],
)
async def test_session_new_rejects_invalid_settings_with_32602(
    askbridge_client: Any, settings: dict[str, Any], field: str
) -> None:
    """Errors: an askUserQuestion.timeout outside -1 | 1..2147483 or an unknown model kind is
    -32602 on session/new, with data.errors naming the field; no session is created."""
    async with askbridge_client() as client:
        error = await expect_rpc_error(client, "session/new", settings)
        assert error.code == -32602
        assert [e["field"] for e in error.data["errors"]] == [field]
        assert await client.list_sessions() == []


async def test_session_list_reports_root_sessions_with_iso_utc_times(askbridge_client: Any) -> None:
    """session/list: root sessions only (a delegated child is not listed, T8), oldest first,
    createdAt in ISO 8601 UTC; the list survives a restart."""
    model = script(
        {"toolCalls": [{"id": "d-1", "name": "delegate", "arguments": {"prompt": "sub"}}]},
        text_step("done"),
    )
    async with askbridge_client(model=model) as client:
        first = await client.new_session()
        second = await client.new_session(cwd="/tmp")
        assert await client.prompt(first, "delegate something") == "end_turn"
        listed = await client.list_sessions()
        assert [s["sessionId"] for s in listed] == [first, second]
        assert all(set(s) <= {"sessionId", "createdAt", "title", "origin"} for s in listed)
        assert {s["origin"] for s in listed} == {"root"}
        assert all(ISO_UTC.fullmatch(s["createdAt"]) for s in listed)
        assert client.updates(first, "tool_call_update")[0]["status"] == "completed"
        # The delegated child's session is not reported through session/update in v1.
        assert {p["sessionId"] for m, p in client.notifications if m == "session/update"} == {first}
    async with askbridge_client() as client:
        assert await client.list_sessions() == listed


async def test_session_load_of_an_unknown_session_is_a_domain_error(askbridge_client: Any) -> None:
    """Errors: UNKNOWN_SESSION is -32000 with data {name: SessionError, code: UNKNOWN_SESSION};
    the same for every session-scoped method (lazy loading finds nothing to load)."""
    async with askbridge_client() as client:
        error = await expect_rpc_error(client, "session/load", {"sessionId": "s-nope"})
        assert (error.code, error.message) == (-32000, "unknown session s-nope")
        assert error.data == {"name": "SessionError", "code": "UNKNOWN_SESSION"}
        scoped = [
            ("session/prompt", {"sessionId": "s-nope", "prompt": [{"type": "text", "text": "x"}]}),
            ("userQuestions/list", {"sessionId": "s-nope"}),
            ("userQuestions/answer", {"sessionId": "s-nope", "callId": "c", "answer": SQLITE}),
            ("userQuestions/withdrawReply", {"sessionId": "s-nope", "callId": "c"}),
            (
                "userQuestions/attachWait",
                {"sessionId": "s-nope", "callId": "c", "partialResultToken": 1},
            ),
        ]
        for method, params in scoped:
            error = await expect_rpc_error(client, method, params)
            assert error.data == {"name": "SessionError", "code": "UNKNOWN_SESSION"}, method
        client.cancel("s-nope")  # a notification: ignored, the server goes on
        assert await client.list_sessions() == []


async def test_update_kinds_of_a_turn_with_an_answered_ask(askbridge_client: Any) -> None:
    """session/update: turn_started {cause prompt}, agent_message_chunk, tool_call
    {title, in_progress, rawInput}, tool_call_update {completed, text the model got},
    turn_ended {stopReason}, in this order."""
    step = ask_step(text="Let me ask.")
    async with askbridge_client(model=script(step, text_step("Thanks."))) as client:
        client.answer_with(lambda ask: SQLITE)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        assert client.updates(sid) == [
            {"sessionUpdate": "turn_started", "turnId": "t-1", "cause": "prompt"},
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "Let me ask."},
            },
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "call-1",
                "title": "ask_user_question",
                "status": "in_progress",
                "rawInput": step["toolCalls"][0]["arguments"],
            },
            {
                "sessionUpdate": "tool_call_update",
                "toolCallId": "call-1",
                "status": "completed",
                "content": [
                    {
                        "type": "content",
                        "content": {
                            "type": "text",
                            "text": json.dumps(SQLITE, separators=(",", ":")),
                        },
                    }
                ],
            },
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": "Thanks."},
            },
            {"sessionUpdate": "turn_ended", "turnId": "t-1", "stopReason": "end_turn"},
        ]


async def test_a_prompt_sent_while_a_turn_runs_is_queued_for_the_next_turn(
    askbridge_client: Any,
) -> None:
    """session/prompt: a prompt sent while a turn runs waits for the next turn; each
    session/prompt is answered when its own turn ends."""
    release = anyio.Event()

    async def answer_when_released(ask: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return SQLITE

    model = script(ask_step(), text_step("one"), text_step("two"))
    async with askbridge_client(model=model) as client:
        client.answer_with(answer_when_released)
        sid = await client.new_session()
        first = client.start_prompt(sid, "first")
        await client.wait_for(lambda: client.asks)
        second = client.start_prompt(sid, "second")
        await client.list_sessions()  # a round trip: the second prompt has been received
        assert len(client.updates(sid, "turn_started")) == 1
        assert not first.done.is_set() and not second.done.is_set()
        release.set()
        assert await first.result() == "end_turn"
        assert await second.result() == "end_turn"
        assert [
            (u["sessionUpdate"], u.get("turnId")) for u in client.updates(sid) if "turnId" in u
        ] == [
            ("turn_started", "t-1"),
            ("turn_ended", "t-1"),
            ("turn_started", "t-2"),
            ("turn_ended", "t-2"),
        ]
        assert {u["cause"] for u in client.updates(sid, "turn_started")} == {"prompt"}
        chunks = [u["content"]["text"] for u in client.updates(sid, "agent_message_chunk")]
        assert chunks == ["one", "two"]


async def test_session_cancel_during_an_ask_aborts_it_and_cancels_queued_prompts(
    askbridge_client: Any,
) -> None:
    """session/cancel: the outstanding userQuestions/ask is withdrawn ($/cancelRequest), the
    tool result is ASK_ABORTED, the running prompt and the queued one answer `cancelled`."""
    async with askbridge_client(model=script(ask_step(), text_step("after"))) as client:
        sid = await client.new_session()
        running = client.start_prompt(sid, "first")
        await client.wait_for(lambda: client.asks)
        queued = client.start_prompt(sid, "second")
        await client.list_sessions()  # a round trip: the second prompt is queued
        client.cancel(sid)
        assert await running.result() == "cancelled"
        assert await queued.result() == "cancelled"
        await client.wait_for(lambda: client.withdrawn)
        assert client.withdrawn == [("userQuestions/ask", client.asks[0])]
        [update] = client.updates(sid, "tool_call_update")
        assert update["status"] == "failed"
        assert update["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}
        assert tool_text(update) == "Error: ask_user_question was aborted before the user answered"
        assert client.updates(sid, "turn_ended") == [
            {"sessionUpdate": "turn_ended", "turnId": "t-1", "stopReason": "cancelled"}
        ]
        # The session is usable again: the next prompt runs the next step.
        assert await client.prompt(sid, "again") == "end_turn"
        assert client.updates(sid, "agent_message_chunk")[-1]["content"]["text"] == "after"


async def test_max_turn_requests_ends_a_turn(askbridge_client: Any) -> None:
    """session/prompt: a turn ends with max_turn_requests after --max-turn-requests requests."""
    call = {"toolCalls": [{"id": "x", "name": "no_such_tool", "arguments": {}}]}
    model = script(call, call, call, text_step("unreached"))
    async with askbridge_client(model=model, args=["--max-turn-requests", "2"]) as client:
        sid = await client.new_session()
        assert await client.prompt(sid, "loop") == "max_turn_requests"
        failures = client.updates(sid, "tool_call_update")
        assert [u["error"]["code"] for u in failures] == ["UNKNOWN_TOOL", "UNKNOWN_TOOL"]


async def test_script_position_and_lazy_loading_survive_a_restart(askbridge_client: Any) -> None:
    """ModelSpec script: after a restart the next request takes the next unused step; a
    session-scoped method (session/prompt, userQuestions/list) loads a stored session
    first, as session/load would, and sends didChange."""
    model = script(text_step("one"), text_step("two"), text_step("three"))
    async with askbridge_client(model=model) as client:
        sid = await client.new_session()
        assert await client.prompt(sid, "a") == "end_turn"
        other = await client.new_session()
    async with askbridge_client() as client:
        assert await client.view(other) == {"active": [], "settled": []}
        assert client.views == {other: {"active": [], "settled": []}}  # didChange on lazy load
        assert await client.prompt(sid, "b") == "end_turn"
        assert client.updates(sid, "agent_message_chunk")[0]["content"]["text"] == "two"
        assert client.updates(sid, "turn_started")[0]["turnId"] == "t-2"
    async with askbridge_client() as client:
        await client.load_session(sid)
        assert await client.prompt(sid, "c") == "end_turn"
        assert client.updates(sid, "agent_message_chunk")[0]["content"]["text"] == "three"


async def test_session_load_repairs_an_interrupted_call_and_sends_did_change(
    askbridge_client: Any,
) -> None:
    """session/load after a crash: the tool call without a result is repaired as
    TOOL_OUTCOME_UNKNOWN (P7), which makes the timed question `continued`; didChange carries
    that view; history is not replayed; the question is answerable late (L1)."""
    model = script(ask_step(), text_step("after the reply"))
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        sid = await client.new_session()
        client.start_prompt(sid, "go")
        await client.wait_for(lambda: client.asks)
        assert (await client.view(sid))["active"][0]["state"] == "open"
        await client.kill()
    async with askbridge_client() as client:
        await client.load_session(sid)
        await client.wait_for(lambda: sid in client.views)
        [active] = client.views[sid]["active"]
        assert active["callId"] == "call-1" and active["state"] == "continued"
        assert active["questions"] == [{**DB_QUESTION}]
        assert client.updates(sid) == []  # not replayed, no turn was re-run
        assert await client.answer_late(sid, "call-1", SQLITE) is True
        await client.wait_for(lambda: client.updates(sid, "turn_ended"))
        [started] = client.updates(sid, "turn_started")
        assert started["cause"] == "inbox"
        assert client.views[sid] == {"active": [], "settled": [{"callId": "call-1", **SQLITE}]}
