"""Input that used to take `askbridge serve` down, now ending one request at most (S1, S3, S8, S9).

Each test sends what an attacker or a careless client would, checks the exact
answer, then checks that the same process still serves a normal request and
that its sessions keep working.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from e2e_scripts import DB_QUESTION, SQLITE, ask_step, script, text_step, tool_text

from askbridge.testing.strict_frames import frame
from askbridge.testing.wire import RawServer, updates_of
from lsp_steps import open_session, prompt_params, start_prompt, until_ask


async def still_serving(server: RawServer) -> None:
    reply = await server.call("session/list", {})
    assert "sessions" in reply["result"], reply


def raw_request(msg_id: int, method: str, params_json: bytes) -> bytes:
    return frame(
        b'{"jsonrpc":"2.0","id":%d,"method":"%s","params":%s}'
        % (msg_id, method.encode(), params_json)
    )


async def test_S3_json_nested_a_thousand_deep_is_a_parse_error(tmp_path: Path) -> None:
    async with RawServer.start(tmp_path / "d") as server:
        await server.initialize()
        server.send_bytes(
            frame(
                b'{"jsonrpc":"2.0","id":1,"method":"session/list","params":'
                + b"[" * 1000
                + b"]" * 1000
                + b"}"
            )
        )
        reply = await server.receive()
        assert reply["id"] is None and reply["error"]["code"] == -32700
        await still_serving(server)
        assert await server.shutdown_and_exit() == 0


async def test_S3_a_lone_surrogate_in_a_prompt_is_invalid_params_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    async with RawServer.start(
        tmp_path / "d", "--model", json.dumps(script(text_step("hi")))
    ) as server:
        sid = await open_session(server)
        params = b'{"sessionId":"%s","prompt":[{"type":"text","text":"x\\ud800"}]}' % sid.encode()
        server.send_bytes(raw_request(77, "session/prompt", params))
        reply = await server.response(77)
        assert reply["error"]["code"] == -32602
        assert reply["error"]["data"]["errors"][0]["field"] == "prompt.0.text"
        ok = await server.call("session/prompt", prompt_params(sid))
        assert ok["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0


async def test_S3_a_lone_surrogate_in_an_answers_custom_is_bad_answer_not_a_crash(
    tmp_path: Path,
) -> None:
    question = {"id": "name", "question": "Project name?"}
    model = script(
        ask_step("call-1", [question]), text_step("next"), ask_step("call-2"), text_step("done")
    )
    async with RawServer.start(tmp_path / "d", "--model", json.dumps(model)) as server:
        sid, prompt, ask = await until_ask(server)
        body = b'{"jsonrpc":"2.0","id":"%s","result":{"answers":[{"id":"name","selected":[],"custom":"a\\udc00"}]}}'
        server.send_bytes(frame(body % ask["id"].encode()))
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        [failed] = updates_of(server.received, "tool_call_update")
        assert failed["error"] == {
            "name": "UserQuestionError",
            "code": "BAD_ANSWER",
        }
        assert "custom holds a lone surrogate" in tool_text(failed)
        # The process and the store are fine: the next turn asks and is answered.
        prompt = await start_prompt(server, sid, "again")
        ask = await server.server_request("userQuestions/ask")
        await server.respond(ask["id"], SQLITE)
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        assert await server.shutdown_and_exit() == 0


async def test_S3_a_lone_surrogate_in_an_error_replys_message_is_kept_replaced(
    tmp_path: Path,
) -> None:
    model = script(ask_step(), text_step("done"))
    async with RawServer.start(tmp_path / "d", "--model", json.dumps(model)) as server:
        _sid, prompt, ask = await until_ask(server)
        body = (
            b'{"jsonrpc":"2.0","id":"%s","error":{"code":-32000,"message":"broken \\ud800 card"}}'
        )
        server.send_bytes(frame(body % ask["id"].encode()))
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        [failed] = updates_of(server.received, "tool_call_update")
        assert tool_text(failed) == "Error: broken \ufffd card"
        assert await server.shutdown_and_exit() == 0


async def test_S1_an_oversized_label_is_a_tool_error_and_nothing_is_asked(tmp_path: Path) -> None:
    big = {**DB_QUESTION, "options": [{"label": "x" * 201}, {"label": "Postgres"}]}
    model = script(ask_step("call-1", [big]), text_step("done"))
    async with RawServer.start(tmp_path / "d", "--model", json.dumps(model)) as server:
        sid = await open_session(server)
        reply = await server.call("session/prompt", prompt_params(sid))
        assert reply["result"] == {"stopReason": "end_turn"}
        assert not [m for m in server.received if m.get("method") == "userQuestions/ask"]
        [failed] = updates_of(server.received, "tool_call_update")
        assert failed["error"] == {
            "name": "UserQuestionError",
            "code": "BAD_QUESTION",
        }
        assert tool_text(failed) == (
            "Error: question db: options.0.label has 201 characters; at most 200"
        )
        assert await server.shutdown_and_exit() == 0


async def test_S1_an_oversized_late_custom_is_bad_answer(tmp_path: Path) -> None:
    question = {"id": "name", "question": "Project name?"}
    model = script(ask_step("call-1", [question], timeout=1), text_step("ok"))
    args = ("--model", json.dumps(model), "--ask-mode", "timed")
    async with RawServer.start(tmp_path / "d", *args) as server:
        # A generic client: the batch is declined, pending at 1 s.
        sid = await open_session(server, {})
        reply = await server.call("session/prompt", prompt_params(sid))
        assert reply["result"] == {"stopReason": "end_turn"}
        answer: dict[str, Any] = {
            "answers": [{"id": "name", "selected": [], "custom": "y" * 65_537}]
        }
        late = await server.call(
            "userQuestions/answer", {"sessionId": sid, "callId": "call-1", "answer": answer}
        )
        assert late["error"]["data"] == {"name": "UserQuestionError", "code": "BAD_ANSWER"}
        assert (
            late["error"]["message"] == "question name: custom has 65537 characters; at most 65536"
        )
        answer["answers"][0]["custom"] = "y" * 65_536
        ok = await server.call(
            "userQuestions/answer", {"sessionId": sid, "callId": "call-1", "answer": answer}
        )
        assert ok["result"] is True
        assert await server.shutdown_and_exit() == 0


async def test_S8_a_response_with_neither_result_nor_error_fails_the_ask_and_gets_no_reply(
    tmp_path: Path,
) -> None:
    model = script(ask_step(), text_step("done"))
    async with RawServer.start(tmp_path / "d", "--model", json.dumps(model)) as server:
        _sid, prompt, ask = await until_ask(server)
        await server.send({"jsonrpc": "2.0", "id": ask["id"]})
        assert (await server.response(prompt))["result"] == {"stopReason": "end_turn"}
        [failed] = updates_of(server.received, "tool_call_update")
        assert failed["error"]["code"] == "PROVIDER_ERROR"
        assert not [m for m in server.received if m.get("id") == ask["id"] and "error" in m]
        assert await server.shutdown_and_exit() == 0


async def test_S8_after_a_too_short_content_length_the_next_request_is_answered(
    tmp_path: Path,
) -> None:
    async with RawServer.start(tmp_path / "d") as server:
        await server.initialize()
        body = b'{"jsonrpc":"2.0","id":5,"method":"session/list","params":{}}'
        server.send_bytes(
            b"Content-Length: %d\r\n\r\n" % (len(body) - 6)
            + body
            + frame(body.replace(b'"id":5', b'"id":6'))
        )
        assert "result" in await server.response(6)
        await still_serving(server)
        assert await server.shutdown_and_exit() == 0


async def test_S9_after_shutdown_every_request_but_exit_is_invalid_request(tmp_path: Path) -> None:
    async with RawServer.start(tmp_path / "d") as server:
        await server.initialize()
        assert (await server.call("shutdown"))["result"] is None
        for method, params in (("session/new", {}), ("session/list", {}), ("shutdown", None)):
            reply = await server.call(method, params)
            assert reply["error"]["code"] == -32600, reply
        await server.notify("exit")
        assert await server.wait() == 0
