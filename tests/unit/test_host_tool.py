"""The ask_user_question tool as a session runs it (behavior.md T1–T6).

Each test drives a real Host turn with the ScriptModel and answers on the real
waterfall (host_helpers.Desk); the assertions read the committed log, the
requests the answerer received and the `session/update`s a client would get.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from host_helpers import (
    ANY,
    Env,
    answer,
    ask_step,
    host_env,
    of_type,
    q,
    result_of,
    script,
    settle,
    text_step,
)

from askbridge.core import AbortSignal, UserQuestionError
from askbridge.host.agent.tools import AskUserQuestionTool, ToolContext, ToolOutcome
from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.protocol import FIXED_MESSAGES, Answer, AnswerItem, ErrorCode, Wait

BAD_TIMEOUT_TEXT = "timeout must be -1 or a positive integer up to 2147483 seconds"


async def run_one_ask(env: Env, step: dict[str, Any], *, then: str = "done") -> str:
    """Start a session whose model makes `step`, then says `then`; returns the session id."""
    s = await env.host.new_session(model=script(step, text_step(then)))
    env.prompt(s.id, "go")
    await settle()
    return s.id


async def ask_tools(env: Env, session_id: str) -> list[dict[str, Any]]:
    (header, *_) = of_type(await env.log(session_id), ev.REQUEST_HEADER)
    return [t for t in header["tools"] if t["name"] == "ask_user_question"]


# -- T1 configuration -----------------------------------------------------------------------


@pytest.mark.parametrize("seconds", [0, -2, 2147484, True, "5", 1.5, None])
async def test_T1_invalid_configured_timeout_fails_when_the_tool_is_registered(
    seconds: object,
) -> None:
    store = MemoryEventStore()
    async with Host(store) as host:
        with pytest.raises(ValueError, match="timeout"):
            await host.new_session(
                model=script(), ask_user_question={"mode": "timed", "timeout": seconds}
            )
        with pytest.raises(ValueError, match="timeout"):
            await host.new_session(
                model=script(), ask_user_question={"mode": "legacy", "timeout": seconds}
            )
        assert await store.list_sessions() == []  # nothing registered, nothing stored


async def test_T1_invalid_mode_fails_and_valid_bounds_are_accepted() -> None:
    store = MemoryEventStore()
    async with Host(store) as host:
        with pytest.raises(ValueError, match="mode"):
            await host.new_session(model=script(), ask_user_question={"mode": "eager"})
        for timeout in (-1, 1, 2147483):
            s = await host.new_session(
                model=script(), ask_user_question={"mode": "timed", "timeout": timeout}
            )
            assert s.header["askUserQuestion"] == {"mode": "timed", "timeout": timeout}
        assert len(await store.list_sessions()) == 3


async def test_T1_defaults_are_legacy_and_120_seconds() -> None:
    async with Host(MemoryEventStore()) as host:
        s = await host.new_session(model=script())
        assert s.header["askUserQuestion"] == {"mode": "legacy", "timeout": 120}
        timed = await host.new_session(model=script(), ask_user_question={"mode": "timed"})
        assert timed.header["askUserQuestion"] == {"mode": "timed", "timeout": 120}
        assert "120 seconds" in timed.ask_tool.schema()["description"]


# -- T2 schemas -----------------------------------------------------------------------------


async def test_T2_timed_schema_adds_integer_timeout_mentions_default_and_pending() -> None:
    async with host_env(mode="timed", timeout_s=7) as env:
        sid = await run_one_ask(env, text_step("hello"))
        (tool,) = await ask_tools(env, sid)  # the model saw exactly one definition
        params = tool["parameters"]
        assert params["required"] == ["questions"]
        assert params["properties"]["timeout"]["type"] == "integer"
        assert "7 seconds" in tool["description"]
        assert "pending" in tool["description"]
        question = params["properties"]["questions"]["items"]
        assert question["required"] == ["id", "question"]
        assert set(question["properties"]) == {
            "id",
            "question",
            "header",
            "options",
            "multi_select",
        }


async def test_T2_timed_schema_without_a_default_timeout_says_so() -> None:
    async with host_env(mode="timed", timeout_s=-1) as env:
        sid = await run_one_ask(env, text_step("hello"))
        (tool,) = await ask_tools(env, sid)
        assert "no timeout" in tool["description"]


async def test_T2_legacy_schema_has_no_timeout_and_no_pending() -> None:
    async with host_env(mode="legacy") as env:
        sid = await run_one_ask(env, text_step("hello"))
        (tool,) = await ask_tools(env, sid)
        assert "timeout" not in tool["parameters"]["properties"]
        assert "pending" not in tool["description"]
        assert set(tool["parameters"]["properties"]) == {"questions"}


@pytest.mark.parametrize("mode", ["legacy", "timed"])
async def test_T2_extra_keys_from_the_model_are_not_passed_on(mode: str) -> None:
    noisy = q(
        "db",
        header="Setup",
        multi_select=True,
        detail="a plan",
        intent={"kind": "plan-review", "approve": "x"},
        colour="red",
    )
    noisy["options"][0]["icon"] = "star"
    async with host_env(mode=mode) as env:
        env.desk.reply(ANY, answer(db=["x", "y"]))
        sid = await run_one_ask(env, ask_step("call-1", [noisy], extra="ignored"))
        (request,) = env.desk.requests
        (item,) = request.questions
        assert item.dump() == {
            "id": "db",
            "question": "Which db?",
            "header": "Setup",
            "options": [{"label": "x"}, {"label": "y"}],
            "multiSelect": True,
        }
        assert result_of(await env.log(sid), "call-1")["isError"] is False


# -- T3 legacy execution --------------------------------------------------------------------


async def test_T3_legacy_asks_without_wait_and_returns_compact_answer_json() -> None:
    async with host_env(mode="legacy") as env:
        env.desk.reply(ANY, answer(db="y"))
        sid = await run_one_ask(env, ask_step("call-1", timeout=0))  # legacy ignores timeout
        (request,) = env.desk.requests
        assert request.wait is None
        assert request.agent is (await env.host.get_session(sid)).agent
        assert request.signal is not None
        result = result_of(await env.log(sid), "call-1")
        assert result["content"] == '{"answers":[{"id":"db","selected":["y"]}]}'
        assert result["isError"] is False
        assert (await env.host.view(sid)).active == []  # P1: legacy calls never appear


async def test_T3_custom_is_present_only_when_given() -> None:
    async with host_env(mode="legacy") as env:
        env.desk.reply(ANY, Answer(answers=[AnswerItem(id="db", selected=["x"], custom="mine")]))
        sid = await run_one_ask(env, ask_step("call-1"))
        # Single-select: custom replaces the choice (V4/V8).
        expected = '{"answers":[{"id":"db","selected":[],"custom":"mine"}]}'
        assert result_of(await env.log(sid), "call-1")["content"] == expected


# -- T4 timed execution ---------------------------------------------------------------------


@pytest.mark.parametrize("qid", ["a", 'a"b'])
async def test_T4_duplicate_ids_fail_before_any_answerer_runs(qid: str) -> None:
    async with host_env(mode="timed") as env:
        sid = await run_one_ask(env, ask_step("call-1", [q(qid), q(qid, labels=None)]))
        assert env.desk.requests == []
        result = result_of(await env.log(sid), "call-1")
        assert (
            result["content"]
            == f"Error: question id {json.dumps(qid)} must be unique within this call"
        )
        assert result["error"] == {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"}


@pytest.mark.parametrize("seconds", [0, -2, 2147484, "5", 1.5, True, None])
async def test_T4_bad_per_call_timeout_fails_before_any_answerer_runs(seconds: object) -> None:
    async with host_env(mode="timed") as env:
        sid = await run_one_ask(env, ask_step("call-1", timeout=seconds))
        assert env.desk.requests == []
        result = result_of(await env.log(sid), "call-1")
        assert result["content"] == f"Error: {BAD_TIMEOUT_TEXT}"
        assert result["isError"] is True
        assert result["error"] == {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"}


async def test_T4_minus_one_asks_with_an_untimed_wait_keyed_by_the_call() -> None:
    async with host_env(mode="timed", timeout_s=5) as env:
        sid = await run_one_ask(env, ask_step("call-1", timeout=-1))
        (request,) = env.desk.requests
        assert request.wait == Wait(call_id="call-1")
        assert request.wait.timed is None
        env.clock.advance(10**9)  # no deadline: it never turns pending
        await settle()
        assert of_type(await env.log(sid), ev.TOOL_RESULT) == []
        env.desk.reply("call-1", answer(db="x"))
        await settle()
        assert result_of(await env.log(sid), "call-1")["content"] == (
            '{"answers":[{"id":"db","selected":["x"]}]}'
        )


async def test_T4_positive_timeout_is_a_timed_wait_of_timeout_seconds() -> None:
    async with host_env(mode="timed", timeout_s=5) as env:
        sid = await run_one_ask(env, ask_step("call-1", timeout=3))  # per call beats the default
        (request,) = env.desk.requests
        assert request.wait == Wait(call_id="call-1", timed=True)
        env.clock.advance(2999)
        await settle()
        assert of_type(await env.log(sid), ev.TOOL_RESULT) == []
        env.clock.advance(1)  # 3 * 1000 ms
        await settle()
        assert json.loads(result_of(await env.log(sid), "call-1")["content"])["pending"] is True
        assert env.desk.cancelled == ["call-1"]  # its private signal was aborted (TW6)


async def test_T4_default_timeout_applies_when_the_call_gives_none() -> None:
    async with host_env(mode="timed", timeout_s=2) as env:
        sid = await run_one_ask(env, ask_step("call-1"))
        env.clock.advance(1999)
        await settle()
        assert of_type(await env.log(sid), ev.TOOL_RESULT) == []
        env.clock.advance(1)
        await settle()
        assert json.loads(result_of(await env.log(sid), "call-1")["content"])["pending"] is True


async def test_T4_timed_questions_require_a_live_agent() -> None:
    async with Host(MemoryEventStore()) as host:
        tool = AskUserQuestionTool(host.service, "timed", 5)
        ctx = ToolContext(None, "s-1", "call-1", AbortSignal())  # type: ignore[arg-type]
        outcome = await tool.run(ctx, {"questions": [q()]})
        assert outcome.content == "Error: timed questions require a live agent"
        assert outcome.error == {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"}


# -- T5 pending -----------------------------------------------------------------------------


async def test_T5_pending_renders_compact_json_with_the_callid_and_the_notice() -> None:
    async with host_env(mode="timed", timeout_s=5) as env:
        sid = await run_one_ask(env, ask_step("call-7"))
        env.clock.advance(5000)
        await settle()
        result = result_of(await env.log(sid), "call-7")
        body = json.loads(result["content"])
        assert list(body) == ["pending", "callId", "message"]
        assert body["pending"] is True and body["callId"] == "call-7"
        assert result["content"] == json.dumps(body, separators=(",", ":"), ensure_ascii=False)
        assert result["isError"] is False and "error" not in result
        message = body["message"]
        for phrase in (
            "No answer batch arrived before the timeout",
            "pending, not a skipped answer",
            "useful work",
            "can still answer",
            "answer_to_pending_question",
            "callId call-7",
            "original questions",
            "Do not treat this as permission",
        ):
            assert phrase in message
        (update,) = env.rec.of("tool_call_update")
        assert update["status"] == "completed"
        assert update["content"][0]["content"]["text"] == result["content"]


# -- T6 failures ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("failure", "text", "data"),
    [
        (
            UserQuestionError.of(ErrorCode.ASK_CANCELLED),
            FIXED_MESSAGES[ErrorCode.ASK_CANCELLED],
            {"name": "UserQuestionError", "code": "ASK_CANCELLED"},
        ),
        (
            RuntimeError("the client broke"),
            "the client broke",
            {"name": "UserQuestionError", "code": "PROVIDER_ERROR"},
        ),
    ],
)
@pytest.mark.parametrize("mode", ["legacy", "timed"])
async def test_T6_failure_is_error_text_with_name_and_code_in_result_and_update(
    mode: str, failure: BaseException, text: str, data: dict[str, str]
) -> None:
    async with host_env(mode=mode) as env:
        env.desk.reply(ANY, failure)
        sid = await run_one_ask(env, ask_step("call-1"))
        result = result_of(await env.log(sid), "call-1")
        assert result["content"] == f"Error: {text}"
        assert result["isError"] is True
        assert result["error"] == data
        (update,) = env.rec.of("tool_call_update", sid)
        assert update == {
            "sessionUpdate": "tool_call_update",
            "toolCallId": "call-1",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": f"Error: {text}"}}],
            "error": data,
        }
        # The failure is the tool's result, not the turn's: the model goes on.
        assert of_type(await env.log(sid), ev.TURN_END)[-1]["stopReason"] == "end_turn"


@pytest.mark.parametrize(
    "item",
    [
        AnswerItem(id="db", selected=["SQLite"]),
        AnswerItem(id="db", selected=["a", "b"], custom="and more"),
        AnswerItem(id="db", custom="my own"),
        AnswerItem(id="skipped"),
    ],
)
def test_T3_the_answer_the_model_reads_is_the_checked_items_wire_form(item: AnswerItem) -> None:
    assert set(AnswerItem.model_fields) == {"id", "selected", "custom"}  # wire_item's fields
    outcome = ToolOutcome.answered(Answer(answers=[item]))
    assert outcome.answers == Answer(answers=[item]).dump()["answers"]
    assert json.loads(outcome.content) == {"answers": outcome.answers}
