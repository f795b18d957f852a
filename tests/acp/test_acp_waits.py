"""ACP front door: cancelled asks, timed waits, claims and late replies.

The timed tests run the door through tests/acp/acp_driver.py on a ManualClock
(`_askbridgeTest/advance`), so no test sleeps through a real deadline. Rule
ids: protocol.md "ACP front door" (ACP-cancel, ACP-claims, ACP-late);
behavior.md A9, TW5, TW6, TW8, C1–C5, L1–L6.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from acp import text_block
from acp.exceptions import RequestError
from acp_harness import (
    RecordingClient,
    ask_step,
    capabilities,
    error_of,
    held_ask,
    held_form,
    open_session,
    prompt_into,
    question,
    script,
    start_agent,
    text_of,
)


async def test_acp_cancel_during_extension_ask_is_aborted_and_late_reply_dropped(
    tmp_path: Path,
) -> None:
    """ACP-cancel, A9: session/cancel during `_askbridge/ask` ends the ask with ASK_ABORTED,
    the prompt answers `cancelled`, the client gets `_askbridge/cancelAsk`, and its reply
    arriving afterwards is dropped quietly."""
    model = script(ask_step("call-1", question("db", "a", "b")), {"text": "never"})
    client = RecordingClient()
    asked, reply_now = held_ask(client, {"answers": [{"id": "db", "selected": ["a"]}]})
    async with start_agent(client, tmp_path / "d", "--ask-mode", "timed", model=model) as (
        conn,
        _proc,
    ):
        sid = await open_session(conn, tmp_path, capabilities(askbridge=True))
        stops: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_into, conn, sid, stops)
            with anyio.fail_after(15):
                await asked.wait()
            await conn.cancel(session_id=sid)
        assert stops == ["cancelled"]
        assert error_of(client.tool_result("call-1")) == "ASK_ABORTED"
        assert client.ext("cancelAsk") == [{"sessionId": sid, "callId": "call-1"}]
        reply_now.set()  # the abandoned request's reply: dropped, nothing breaks
        view = await conn.ext_method("askbridge/list", {"sessionId": sid})
        assert view == {"active": [], "settled": []}
        assert client.turns("ended")[-1]["stopReason"] == "cancelled"


async def test_acp_timed_pending_when_client_declines_then_late_reply_inbox_turn(
    tmp_path: Path,
) -> None:
    """ACP-q4, TW8, TW6, ACP-late, L4: a client with no question means declines; the timed
    ask returns pending at the deadline (not before); a late reply through
    `_askbridge/answer` starts an inbox turn announced by `_askbridge/turn`."""
    model = script(
        ask_step("call-1", question("db", "a", "b"), timeout=30),
        {"text": "meanwhile"},
        {"text": "got it"},
    )
    client = RecordingClient()
    flags = ("--ask-mode", "timed")
    async with start_agent(client, tmp_path / "d", *flags, model=model, driver=True) as (
        conn,
        _proc,
    ):
        sid = await open_session(conn, tmp_path)
        stops: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(prompt_into, conn, sid, stops)
            tick = {"sessionId": sid, "callId": "call-1", "ms": 29_999}
            await conn.ext_method("askbridgeTest/advance", tick)
            view = await conn.ext_method("askbridge/list", {"sessionId": sid})
            assert [a["state"] for a in view["active"]] == ["open"]
            assert client.tool_result("call-1") is None  # TW8: declined, yet waits the deadline
            await conn.ext_method("askbridgeTest/advance", {"ms": 1})
        assert stops == ["end_turn"]
        assert text_of(client.tool_result("call-1"))["pending"] is True
        change = await client.wait_for(lambda: [c for c in client.ext("didChange") if c["changes"]])
        assert change[-1]["changes"] == [{"callId": "call-1", "state": "continued"}]

        reply = {"answers": [{"id": "db", "selected": ["b"]}]}
        late = {"sessionId": sid, "callId": "call-1", "answer": reply}
        assert await conn.ext_method("askbridge/answer", late) == {"accepted": True}
        await client.wait_for(lambda: len(client.turns("ended")) == 2)
        assert [t["cause"] for t in client.turns("started")] == ["prompt", "inbox"]
        admitted = client.updates("user_message_chunk")[-1]
        assert admitted["_meta"]["askbridge"]["source"]["callId"] == "call-1"
        assert client.updates("agent_message_chunk")[-1]["content"]["text"] == "got it"
        view = await conn.ext_method("askbridge/list", {"sessionId": sid})
        assert view["settled"] == [{"callId": "call-1", "answers": reply["answers"]}]


@pytest.mark.parametrize("answered_by", ["form", "extension answer", "session/cancel"])
async def test_F4_acp_timed_form_stays_open_past_its_deadline(
    tmp_path: Path, answered_by: str
) -> None:
    """F4, TW6, L7: the deadline passing while a form is open returns pending to the model
    but does not withdraw the form; the client's later accept is the late reply that wakes
    the agent. Settled another way (here `_askbridge/answer`) or on `session/cancel`, the
    form is withdrawn with `$/cancel_request`; a reply to it after that is a late reply
    only while the question is still pending (protocol.md, L7)."""
    model = script(ask_step("call-1", question("db", "a", "b"), timeout=5), {"text": "later"})
    client = RecordingClient()
    shown, submit = held_form(client, {"q1": "a"})
    flags = ("--ask-mode", "timed")
    async with start_agent(
        client, tmp_path / "d", *flags, model=model, driver=True, unstable=True
    ) as (conn, _proc):
        sid = await open_session(conn, tmp_path, capabilities(form=True))
        async with anyio.create_task_group() as tg:
            tg.start_soon(conn.prompt, sid, [text_block("go")])
            with anyio.fail_after(15):
                await shown.wait()
            await conn.ext_method("askbridgeTest/advance", {"ms": 5_000})
        assert text_of(client.tool_result("call-1")) == {
            "pending": True,
            "callId": "call-1",
            "message": text_of(client.tool_result("call-1"))["message"],
        }
        [form] = client.messages("elicitation/create")
        await conn.ext_method("askbridgeTest/advance", {"ms": 60_000})  # long past it
        assert not client.messages("$/cancel_request")  # F4: still open
        expected = [{"id": "db", "selected": ["a"]}]
        if answered_by == "extension answer":
            answer = {"answers": [{"id": "db", "selected": ["b"]}]}
            await conn.ext_method(
                "askbridge/answer", {"sessionId": sid, "callId": "call-1", "answer": answer}
            )
            await client.wait_for(lambda: client.messages("$/cancel_request"))
            assert [m["params"] for m in client.messages("$/cancel_request")] == [
                {"requestId": form["id"]}
            ]
            expected = answer["answers"]
        if answered_by == "session/cancel":  # the user stopped the agent: the form goes
            await conn.cancel(session_id=sid)
            await client.wait_for(lambda: client.messages("$/cancel_request"))
            assert [m["params"] for m in client.messages("$/cancel_request")] == [
                {"requestId": form["id"]}
            ]
        submit.set()  # after a withdrawal too, a reply while still pending is a late reply (L7)
        await client.wait_for(lambda: len(client.turns("ended")) == 2)
        view = await conn.ext_method("askbridge/list", {"sessionId": sid})
        assert view == {"active": [], "settled": [{"callId": "call-1", "answers": expected}]}


async def test_acp_claims_attach_release_and_late_reply_errors(tmp_path: Path) -> None:
    """ACP-claims, C1–C5, TW5, L2, L3, L5: attachWait returns the time left and holds one
    claim per client per wait (attaching again adds none); the deadline passes unnoticed
    while claimed; one releaseWait lets it expire at once (pending, cancelAsk); a late
    reply queued while the turn is busy is REPLY_QUEUED the second time and withdrawable."""
    model = script(
        ask_step("call-1", question("db", "a", "b"), timeout=30),
        ask_step("call-2", question("os", "x"), timeout=-1),
    )
    client = RecordingClient()
    held_ask(client)  # nobody answers in the extension
    flags = ("--ask-mode", "timed")
    async with start_agent(client, tmp_path / "d", *flags, model=model, driver=True) as (
        conn,
        _proc,
    ):
        sid = await open_session(conn, tmp_path, capabilities(askbridge=True))
        call1 = {"sessionId": sid, "callId": "call-1"}
        async with anyio.create_task_group() as tg:
            stops: list[str] = []

            tg.start_soon(prompt_into, conn, sid, stops)
            await client.wait_for(lambda: client.ext("ask"))
            assert client.ext("ask")[0]["wait"] == {"callId": "call-1", "timed": True}
            assert await conn.ext_method("askbridge/attachWait", call1) == {"remainingMs": 30_000}
            await conn.ext_method("askbridgeTest/advance", {"ms": 10_000})
            assert await conn.ext_method("askbridge/attachWait", call1) == {"remainingMs": 20_000}
            await conn.ext_method("askbridgeTest/advance", {"ms": 60_000})  # past the deadline
            view = await conn.ext_method("askbridge/list", {"sessionId": sid})
            assert [a["state"] for a in view["active"]] == ["open"]  # TW5: claimed, no expiry
            assert await conn.ext_method("askbridge/releaseWait", call1) == {"released": True}
            assert text_of(await client.result_of("call-1"))["pending"] is True  # one claim only
            assert await conn.ext_method("askbridge/releaseWait", call1) == {"released": False}
            assert await conn.ext_method("askbridge/attachWait", call1) == {"remainingMs": None}
            await client.wait_for(lambda: client.ext("cancelAsk"))
            assert client.ext("cancelAsk") == [{"sessionId": sid, "callId": "call-1"}]

            # the turn is now busy in call-2 (no timed wait: nothing to claim)
            await client.wait_for(lambda: len(client.ext("ask")) == 2)
            call2 = {"sessionId": sid, "callId": "call-2"}
            assert await conn.ext_method("askbridge/attachWait", call2) == {"remainingMs": None}
            late = {**call1, "answer": {"answers": [{"id": "db", "selected": ["a"]}]}}
            assert await conn.ext_method("askbridge/answer", late) == {"accepted": True}
            with pytest.raises(RequestError) as queued:
                await conn.ext_method("askbridge/answer", late)
            assert queued.value.code == -32000
            assert queued.value.data == {"name": "UserQuestionError", "code": "REPLY_QUEUED"}
            assert await conn.ext_method("askbridge/withdrawReply", call1) == {"withdrawn": True}
            assert await conn.ext_method("askbridge/withdrawReply", call1) == {"withdrawn": False}
            wrong = {**call1, "answer": {"answers": [{"id": "nope", "selected": []}]}}
            with pytest.raises(RequestError) as bad:
                await conn.ext_method("askbridge/answer", wrong)
            assert bad.value.data == {"name": "UserQuestionError", "code": "BAD_ANSWER"}
            with pytest.raises(RequestError) as malformed:
                await conn.ext_method("askbridge/answer", call1)
            assert malformed.value.code == -32602
            await conn.cancel(session_id=sid)
        assert stops == ["cancelled"]
        assert error_of(client.tool_result("call-2")) == "ASK_ABORTED"
        assert client.ext("cancelAsk")[-1] == {"sessionId": sid, "callId": "call-2"}
