"""protocol.md "Questions: client → server": answer, withdrawReply, list, didChange (L1–L6, P*).

A pending question is made without waiting for a deadline: the client ends the
card with ASK_TIMED_OUT, which returns pending at once (TW7).
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest
from e2e_scripts import (
    DB_QUESTION,
    POSTGRES,
    SQLITE,
    ask_step,
    script,
    text_step,
)

from askbridge.core import UserQuestionError
from askbridge.jsonrpc import RpcResponseError
from askbridge.protocol import ErrorCode
from lsp_steps import until_ask

pytestmark = pytest.mark.timeout(60)

OS_QUESTION = {
    "id": "os",
    "question": "Which OS?",
    "options": [{"label": "Linux"}, {"label": "BSD"}],
}
LINUX = {"answers": [{"id": "os", "selected": ["Linux"]}]}


def timed_out() -> UserQuestionError:
    return UserQuestionError.of(ErrorCode.ASK_TIMED_OUT)


async def answer_error(client: Any, sid: str, call_id: str, answer: Any) -> RpcResponseError:
    with pytest.raises(RpcResponseError) as info:
        await client.request(
            "userQuestions/answer", {"sessionId": sid, "callId": call_id, "answer": answer}
        )
    return info.value


async def test_late_reply_wakes_the_idle_agent_and_settles_the_question(
    askbridge_client: Any,
) -> None:
    """L1/L4/L6/P4: an answer to a `continued` question returns true, wakes the idle agent into a
    turn with cause `inbox` whose user_message carries the L4 text and source; the question
    moves to settled (didChange), and further replies return false."""
    model = script(ask_step(), text_step("pending noted"), text_step("thanks for the reply"))
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        client.answer_script(timed_out())
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        assert client.views[sid]["active"][0]["state"] == "continued"
        assert await client.answer_late(sid, "call-1", POSTGRES) is True
        await client.wait_for(lambda: len(client.updates(sid, "turn_ended")) == 2)
        started = client.updates(sid, "turn_started")[1]
        assert started == {"sessionUpdate": "turn_started", "turnId": "t-2", "cause": "inbox"}
        [message] = client.updates(sid, "user_message")
        assert message["source"] == {
            "kind": "user-question-reply",
            "callId": "call-1",
            "outcome": "answered",
        }
        [block] = message["content"]
        expected = {
            "kind": "answer_to_pending_question",
            "tool": "ask_user_question",
            "callId": "call-1",
            "questions": [DB_QUESTION],
            "answers": POSTGRES["answers"],
        }
        assert block == {"type": "text", "text": json.dumps(expected, separators=(",", ":"))}
        settled = {"active": [], "settled": [{"callId": "call-1", **POSTGRES}]}
        assert client.views[sid] == settled
        assert await client.view(sid) == settled
        assert await client.answer_late(sid, "call-1", SQLITE) is False  # L6
        assert (
            client.updates(sid, "agent_message_chunk")[-1]["content"]["text"]
            == "thanks for the reply"
        )


async def test_answers_that_are_not_accepted_return_false(askbridge_client: Any) -> None:
    """L1: unknown call, an `open` question (only the waterfall answers it) and a legacy call
    (never in the view, P1) all return false and queue nothing."""
    release = anyio.Event()

    async def answer_when_released(ask: dict[str, Any]) -> dict[str, Any]:
        await release.wait()
        return SQLITE

    async with askbridge_client(
        model=script(ask_step(), text_step("done")), ask_mode="timed"
    ) as client:
        client.answer_with(answer_when_released)
        sid = await client.new_session()
        run = client.start_prompt(sid, "go")
        await client.wait_for(lambda: client.asks)
        assert await client.answer_late(sid, "call-1", POSTGRES) is False  # open
        assert await client.answer_late(sid, "call-404", POSTGRES) is False
        release.set()
        assert await run.result() == "end_turn"
        assert await client.answer_late(sid, "call-1", POSTGRES) is False  # settled
        legacy = await client.new_session(askUserQuestion={"mode": "legacy"})
        assert await client.answer_late(legacy, "call-1", POSTGRES) is False
        assert len(client.updates(sid, "turn_started")) == 1  # nothing woke the agent


async def test_queued_reply_guard_withdraw_and_answer_errors(askbridge_client: Any) -> None:
    """L2/L3/L5 over the wire, while the agent is busy in a second ask (so a reply stays queued):
    a second reply is REPLY_QUEUED (checked before BAD_ANSWER); withdrawReply removes the queued
    reply (true, then false) and the question stays answerable; a batch naming the questions
    wrongly is BAD_ANSWER; a payload failing the schema is -32602; the final reply is admitted
    at the next step boundary."""
    release = anyio.Event()

    async def answers(ask: dict[str, Any]) -> dict[str, Any]:
        if ask["wait"]["callId"] == "call-1":
            raise timed_out()
        await release.wait()
        return LINUX

    model = script(
        ask_step("call-1"),
        ask_step("call-2", [OS_QUESTION], timeout=-1),
        text_step("both in"),
    )
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        client.answer_with(answers)
        sid = await client.new_session()
        run = client.start_prompt(sid, "go")
        await client.wait_for(lambda: len(client.asks) == 2)
        assert await client.answer_late(sid, "call-1", POSTGRES) is True
        queued = await answer_error(client, sid, "call-1", SQLITE)
        assert (queued.code, queued.data) == (
            -32000,
            {"name": "UserQuestionError", "code": "REPLY_QUEUED"},
        )
        assert queued.message == "a reply is already queued for this question"
        before_bad = await answer_error(client, sid, "call-1", {"answers": []})
        assert before_bad.data["code"] == "REPLY_QUEUED"  # L2 before L3
        assert await client.withdraw_reply(sid, "call-1") is True
        assert await client.withdraw_reply(sid, "call-1") is False
        assert await client.withdraw_reply(sid, "call-404") is False
        for bad in (
            {"answers": []},
            {"answers": [{"id": "db", "selected": ["MySQL"]}]},
            {"answers": [{"id": "db"}, {"id": "db"}]},
            {"answers": [{"id": "db"}, {"id": "os"}]},
        ):
            error = await answer_error(client, sid, "call-1", bad)
            assert error.data == {"name": "UserQuestionError", "code": "BAD_ANSWER"}, bad
        missing = await answer_error(client, sid, "call-1", {"answers": []})
        assert (
            missing.message
            == "the answer batch for call-1 must name each of its 1 questions exactly once"
        )
        schema = await answer_error(client, sid, "call-1", {"answers": [{"selected": "x"}]})
        assert schema.code == -32602
        assert await client.answer_late(sid, "call-1", {"answers": [{"id": "db", "selected": []}]})
        assert client.updates(sid, "user_message") == []  # queued, not yet admitted
        release.set()
        assert await run.result() == "end_turn"
        [message] = client.updates(sid, "user_message")
        assert json.loads(message["content"][0]["text"])["answers"] == [
            {"id": "db", "selected": []}
        ]
        assert [u["sessionUpdate"] for u in client.updates(sid)][-4:] == [
            "tool_call_update",
            "user_message",
            "agent_message_chunk",
            "turn_ended",
        ]
        assert len(client.updates(sid, "turn_started")) == 1  # admitted within the same turn
        assert (await client.view(sid))["settled"] == [
            {"callId": "call-2", **LINUX},
            {"callId": "call-1", "answers": [{"id": "db", "selected": []}]},
        ]


async def test_did_change_follows_every_view_change(askbridge_client: Any) -> None:
    """userQuestions/didChange (V7, P2, P3): open when the timed call is made, continued when it
    returns pending, each notification equal to what userQuestions/list returns then."""
    model = script(ask_step(), text_step("ok"))
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        seen: list[dict[str, Any]] = []

        async def record_then_time_out(ask: dict[str, Any]) -> dict[str, Any]:
            seen.append(await client.view(ask["sessionId"]))
            raise timed_out()

        client.answer_with(record_then_time_out)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        changes = [p["changes"] for m, p in client.notifications if m == "userQuestions/didChange"]
        # S2: each change alone, never the whole view.
        assert changes == [
            [{"callId": "call-1", "state": "open", "questions": [DB_QUESTION]}],
            [{"callId": "call-1", "state": "continued"}],
        ]
        open_view = {
            "active": [{"callId": "call-1", "questions": [DB_QUESTION], "state": "open"}],
            "settled": [],
        }
        continued = {"active": [{**open_view["active"][0], "state": "continued"}], "settled": []}
        assert seen == [open_view]
        assert await client.view(sid) == continued == client.views[sid]


async def test_L7_an_answer_after_the_deadline_withdrew_the_card_is_a_late_reply(
    tmp_path: Any,
) -> None:
    """L7: the deadline passes unclaimed, the server withdraws the card ($/cancelRequest) and
    the tool returns pending; the client's answer arriving after that is not lost: it is taken
    as a late reply and wakes the agent. An invalid one is dropped without a reply."""
    from askbridge.testing.wire import RawServer, updates_of

    model = script(ask_step(timeout=1), text_step("got it"))
    args = ("--model", json.dumps(model), "--ask-mode", "timed")
    async with RawServer.start(tmp_path / "d", *args) as server:
        sid, prompt, ask = await until_ask(server)
        cancel = await server.notification("$/cancelRequest", timeout=10)
        assert cancel["params"] == {"id": ask["id"]}
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        await server.respond(
            ask["id"], {"answers": [{"id": "db", "selected": ["Nope"]}]}
        )  # V8 fails
        await server.respond(ask["id"], SQLITE)  # the first reply consumed the id: ignored too
        assert (await server.call("userQuestions/list", {"sessionId": sid}))["result"]["active"][0][
            "state"
        ] == "continued"

    model = script(ask_step(timeout=1), text_step("got it"))
    async with RawServer.start(tmp_path / "e", *args) as server:
        sid, prompt, ask = await until_ask(server)
        await server.notification("$/cancelRequest", timeout=10)
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        await server.respond(ask["id"], SQLITE)
        await server.notification(
            "session/update",
            lambda p: (
                p["update"] == {"sessionUpdate": "turn_started", "turnId": "t-2", "cause": "inbox"}
            ),
        )
        ended = {"sessionUpdate": "turn_ended", "turnId": "t-2", "stopReason": "end_turn"}
        await server.notification("session/update", lambda p: p["update"] == ended)
        [admitted] = updates_of(server.received, "user_message")
        assert admitted["source"] == {
            "kind": "user-question-reply",
            "callId": "call-1",
            "outcome": "answered",
        }
        view = (await server.call("userQuestions/list", {"sessionId": sid}))["result"]
        assert view == {"active": [], "settled": [{"callId": "call-1", **SQLITE}]}
        assert await server.shutdown_and_exit() == 0
