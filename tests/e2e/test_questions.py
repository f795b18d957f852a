"""protocol.md "Questions: server → client": the `userQuestions/ask` relay.

The params a capable client receives, blocking and timed asks, multi-select with
custom text, the server's checks of the client's answer (schema, then V8 →
BAD_ANSWER), the error replies that end a card (ASK_CANCELLED, ASK_TIMED_OUT →
pending, anything else → PROVIDER_ERROR), and a late client reply after
`$/cancelRequest` being ignored quietly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from e2e_scripts import (
    ASK_CANCELLED_DATA,
    DB_QUESTION,
    SQLITE,
    ask_step,
    script,
    text_step,
    tool_json,
    tool_text,
)

from askbridge.core import UserQuestionError
from askbridge.jsonrpc import RpcError
from askbridge.protocol import ErrorCode
from askbridge.testing.wire import RawServer, updates_of
from lsp_steps import prompt_params, until_ask

pytestmark = pytest.mark.timeout(60)

LANGS = {
    "id": "langs",
    "header": "Stack",
    "question": "Which languages?",
    "options": [
        {"label": "Python", "description": "fast to write"},
        {"label": "Rust"},
        {"label": "Go"},
    ],
    "multi_select": True,
}
NAME = {"id": "name", "question": "What is the project called?"}


async def test_blocking_ask_params_and_answer(askbridge_client: Any) -> None:
    """userQuestions/ask (A7, T3): {sessionId, agentId, questions} without `wait` for a blocking
    (legacy) ask; the client's Answer becomes the tool result as compact JSON."""
    async with askbridge_client(model=script(ask_step(), text_step("done"))) as client:
        client.answer_with(lambda ask: SQLITE)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        [ask] = client.asks
        assert set(ask) == {"sessionId", "agentId", "questions"}
        assert ask["sessionId"] == sid and ask["agentId"].startswith("a-")
        assert ask["questions"] == [DB_QUESTION]
        [update] = client.updates(sid, "tool_call_update")
        assert (update["status"], tool_json(update)) == ("completed", SQLITE)


async def test_multi_select_with_custom_text(askbridge_client: Any) -> None:
    """V2/V4/V8: multi_select reaches the client as multiSelect; several labels plus custom
    text are accepted for a multi-select question; a question without options takes custom."""
    answer = {
        "answers": [
            {"id": "langs", "selected": ["Python", "Rust"], "custom": "and some Zig"},
            {"id": "name", "selected": [], "custom": "askbridge"},
        ]
    }
    model = script(ask_step(questions=[LANGS, NAME]), text_step("done"))
    async with askbridge_client(model=model) as client:
        client.answer_with(lambda ask: answer)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        [ask] = client.asks
        wire_langs = {k: v for k, v in LANGS.items() if k != "multi_select"} | {"multiSelect": True}
        assert ask["questions"] == [wire_langs, NAME]
        [update] = client.updates(sid, "tool_call_update")
        assert tool_json(update) == answer


async def test_timed_ask_carries_the_wait(askbridge_client: Any) -> None:
    """userQuestions/ask for a timed wait carries wait {callId, timed: true} (TW4); a per-call
    timeout of -1 is an indefinite wait {callId} without `timed` (T4)."""
    model = script(ask_step(), ask_step("call-2", timeout=-1), text_step("done"))
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        client.answer_with(lambda ask: SQLITE)
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        assert [a["wait"] for a in client.asks] == [
            {"callId": "call-1", "timed": True},
            {"callId": "call-2"},
        ]
        # Both answered through the waterfall: settled in the view, in settlement order (V7).
        assert (await client.view(sid))["settled"] == [
            {"callId": "call-1", **SQLITE},
            {"callId": "call-2", **SQLITE},
        ]


@pytest.mark.parametrize("mode", ["legacy", "timed"])
async def test_invalid_client_answers_fail_the_ask_with_bad_answer(
    askbridge_client: Any, mode: str
) -> None:
    """userQuestions/ask result: checked by the server (schema, then V8); an invalid answer
    fails the ask with BAD_ANSWER instead of being passed on (in both modes)."""
    bad_answers = [
        {"answers": [{"id": "db", "selected": ["MySQL"]}]},  # not an option label
        {"answers": [{"id": "db", "selected": ["SQLite", "Postgres"]}]},  # two for single-select
        {"answers": []},  # db missing
        {"answers": [{"id": "db", "selected": []}, {"id": "db", "selected": []}]},  # twice
        {"answers": [{"id": "db", "selected": []}, {"id": "other", "selected": []}]},  # extra
        {"answers": "SQLite"},  # not an answer batch (schema)
        None,  # no result at all
    ]
    steps = [ask_step(f"call-{i}") for i in range(len(bad_answers))]
    async with askbridge_client(model=script(*steps), ask_mode=mode) as client:
        client.answer_script(*bad_answers)  # type: ignore[arg-type]
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        updates = client.updates(sid, "tool_call_update")
        assert len(updates) == len(bad_answers)
        for update in updates:
            assert update["status"] == "failed"
            assert update["error"] == {"name": "UserQuestionError", "code": "BAD_ANSWER"}, update
            assert tool_text(update).startswith("Error: ")
        assert "must name each of its 1 questions exactly once" in tool_text(updates[2])
        assert (await client.view(sid))["settled"] == []


async def test_error_replies_that_end_a_card(askbridge_client: Any) -> None:
    """userQuestions/ask errors (E2): ASK_CANCELLED stays ASK_CANCELLED with the table's message;
    any other error becomes PROVIDER_ERROR with the client's message (E1)."""
    model = script(ask_step("c-1"), ask_step("c-2"), ask_step("c-3"), text_step("done"))
    async with askbridge_client(model=model) as client:
        client.answer_script(
            UserQuestionError("the client's own wording", ErrorCode.ASK_CANCELLED),
            RpcError(-32001, "the card renderer crashed"),
            RpcError(-32603, "internal client error", {"name": "TypeError"}),
        )
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        cancelled, crashed, internal = client.updates(sid, "tool_call_update")
        assert cancelled["error"] == ASK_CANCELLED_DATA
        assert tool_text(cancelled) == "Error: the user cancelled ask_user_question"
        assert crashed["error"] == {"name": "UserQuestionError", "code": "PROVIDER_ERROR"}
        assert tool_text(crashed) == "Error: the card renderer crashed"
        assert internal["error"]["code"] == "PROVIDER_ERROR"
        assert tool_text(internal) == "Error: internal client error"


async def test_ask_timed_out_reply_returns_pending(askbridge_client: Any) -> None:
    """TW7 / T5: a claiming client whose countdown ran out replies ASK_TIMED_OUT; the tool
    returns pending (not an error) and the question is `continued` in the view."""
    model = script(ask_step(), text_step("carrying on"))
    async with askbridge_client(model=model, ask_mode="timed", ask_timeout=600) as client:
        client.answer_script(UserQuestionError.of(ErrorCode.ASK_TIMED_OUT))
        sid = await client.new_session()
        assert await client.prompt(sid, "go") == "end_turn"
        [update] = client.updates(sid, "tool_call_update")
        assert update["status"] == "completed" and "error" not in update
        result = tool_json(update)
        assert (result["pending"], result["callId"]) == (True, "call-1")
        assert "answer_to_pending_question" in result["message"]
        assert "Do not treat this as permission" in result["message"]
        [active] = (await client.view(sid))["active"]
        assert (active["callId"], active["state"]) == ("call-1", "continued")
        assert client.views[sid] == {"active": [active], "settled": []}  # didChange sent


async def test_a_late_client_reply_after_cancel_request_is_ignored_quietly(tmp_path: Path) -> None:
    """$/cancelRequest (A9): after session/cancel the server withdraws the ask; the client's
    answer that arrives afterwards is dropped without any reply or logged error, the tool
    result stays ASK_ABORTED, and the server keeps serving."""
    model = json.dumps(script(ask_step(), text_step("after")))
    async with RawServer.start(tmp_path / "data", "--model", model) as server:
        sid, prompt_id, ask = await until_ask(server)
        await server.notify("session/cancel", {"sessionId": sid})
        cancel = await server.notification("$/cancelRequest")
        assert cancel["params"] == {"id": ask["id"]}
        assert (await server.response(prompt_id))["result"] == {"stopReason": "cancelled"}
        await server.respond(ask["id"], SQLITE)  # too late
        await server.respond_error(ask["id"], -32800, "Request cancelled")  # and its twin
        reply = await server.call("userQuestions/list", {"sessionId": sid})
        assert reply["result"] == {"active": [], "settled": []}
        again = await server.call("session/prompt", prompt_params(sid))
        assert again["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0
        await server.read_to_end()
        results = updates_of(server.received, "tool_call_update")
        assert [u["error"]["code"] for u in results] == ["ASK_ABORTED"]
        assert [
            u["content"]["text"] for u in updates_of(server.received, "agent_message_chunk")
        ] == ["after"]
        assert "ERROR" not in server.stderr_text() and "Traceback" not in server.stderr_text()
