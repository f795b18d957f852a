"""Delegated child agents (behavior.md T7, T8, P6).

The parent's script calls `delegate {prompt, steps}`; the child runs the
given steps as a one-shot subagent in its own session. Its questions fail
with DELEGATED_CALLER before any answerer runs; its log, questions and
updates stay out of the parent's.
"""

from __future__ import annotations

import pytest
from host_helpers import (
    ANY,
    Env,
    answer,
    ask_step,
    call_step,
    host_env,
    of_type,
    result_of,
    script,
    settle,
    state_of,
    text_step,
    types,
    user_texts,
)

from askbridge.host.log import events as ev
from askbridge.host.log.projection import fold_all
from askbridge.protocol import FIXED_MESSAGES, ErrorCode

CHILD_FINAL = "I need the user to choose the database; options: x or y."


def delegate_step(call_id: str = "d-1", *child_steps: dict) -> dict:
    steps = list(child_steps) or [ask_step("c-1"), text_step(CHILD_FINAL)]
    return call_step(call_id, "delegate", {"prompt": "choose a database", "steps": steps})


async def run_parent(env: Env, *steps: dict) -> tuple[str, str]:
    """Run a parent prompt to its end; returns (parent id, child id)."""
    s = await env.host.new_session(model=script(*steps))
    run = env.prompt(s.id, "go")
    await settle()
    assert run.stop == "end_turn", run
    children = [i for i in await env.store.list_sessions() if i.parent_session_id == s.id]
    assert len(children) == 1
    return s.id, children[0].session_id


@pytest.mark.parametrize("mode", ["legacy", "timed"])
async def test_T7_child_question_fails_delegated_caller_and_reaches_no_answerer(mode: str) -> None:
    async with host_env(mode=mode) as env:
        env.desk.reply(ANY, answer(db="x"))  # would answer, if it were ever asked
        parent, child = await run_parent(env, delegate_step(), text_step("parent done"))
        assert env.desk.requests == []
        failed = result_of(await env.log(child), "c-1")
        assert failed["content"] == "Error: " + FIXED_MESSAGES[ErrorCode.DELEGATED_CALLER]
        assert failed["isError"] is True
        assert failed["error"] == {"name": "UserQuestionError", "code": "DELEGATED_CALLER"}
        # The child put the open decision in its final result, which the parent receives.
        delegated = result_of(await env.log(parent), "d-1")
        assert delegated["content"] == CHILD_FINAL and delegated["isError"] is False


async def test_T8_child_runs_in_its_own_session_and_the_parent_logs_only_the_call() -> None:
    async with host_env() as env:
        parent, child = await run_parent(env, delegate_step(), text_step("parent done"))
        parent_session = await env.host.get_session(parent)
        child_log, parent_log = await env.log(child), await env.log(parent)
        header = child_log[0]
        assert header["origin"] == "subagent"
        assert header["parentSessionId"] == parent
        assert header["parentAgentId"] == parent_session.agent.id
        assert header["agentId"] != parent_session.agent.id
        assert header["askUserQuestion"] == parent_session.header["askUserQuestion"]
        assert user_texts(child_log) == ["choose a database"]
        assert types(child_log)[1:3] == [ev.TURN_START, ev.USER_MESSAGE]
        # The parent's log: its own prompt, the delegate call and its result, nothing of the child.
        assert [(e["type"], e.get("callId")) for e in parent_log if "callId" in e] == [
            (ev.TOOL_CALL, "d-1"),
            (ev.TOOL_RESULT, "d-1"),
        ]
        assert user_texts(parent_log) == ["go"]
        assert CHILD_FINAL not in [e.get("text") for e in of_type(parent_log, ev.ASSISTANT_MESSAGE)]
        assert len(of_type(parent_log, ev.REQUEST_HEADER)) == 2  # the child's requests are its own
        # One-shot: the child agent is gone, and only the parent is a listed (root) session.
        assert child not in env.host.sessions
        assert [i.session_id for i in await env.host.list_sessions()] == [parent]


async def test_T8_child_final_text_is_its_last_text_and_empty_when_it_says_nothing() -> None:
    async with host_env() as env:
        parent, _ = await run_parent(
            env, delegate_step("d-1", text_step("only words")), text_step("parent done")
        )
        assert result_of(await env.log(parent), "d-1")["content"] == "only words"
    async with host_env() as env:
        parent, _ = await run_parent(env, delegate_step("d-1", {"text": ""}), text_step("done"))
        assert result_of(await env.log(parent), "d-1")["content"] == ""


async def test_T8_bad_delegate_input_is_a_tool_input_error() -> None:
    async with host_env() as env:
        s = await env.host.new_session(
            model=script(call_step("d-1", "delegate", {"steps": []}), text_step("done"))
        )
        env.prompt(s.id, "go")
        await settle()
        result = result_of(await env.log(s.id), "d-1")
        assert result["content"] == "Error: delegate requires a string prompt"
        assert result["error"] == {"name": "ToolInputError", "code": "BAD_TOOL_INPUT"}


async def test_P6_child_questions_and_updates_never_reach_the_parent() -> None:
    async with host_env(mode="timed", timeout_s=5) as env:
        s = await env.host.new_session(
            model=script(ask_step("call-1"), delegate_step(), text_step("parent done"))
        )
        env.prompt(s.id, "go")
        await settle()
        env.clock.advance(5000)  # call-1 goes pending, then the parent delegates
        await settle()
        (child,) = [i.session_id for i in await env.store.list_sessions() if i.origin == "subagent"]
        # The parent's view holds its own question only; the child's fold holds none of it.
        parent_view = await env.host.view(s.id)
        assert [a.call_id for a in parent_view.active] == ["call-1"]
        assert state_of(parent_view, "c-1") is None
        child_view = fold_all(await env.log(child)).view()
        assert child_view.active == [] and child_view.settled == []
        # Front doors hear nothing about the child session (protocol: not reported in v1).
        assert {sid for sid, _ in env.rec.updates} == {s.id}
        assert {sid for sid, _ in env.rec.changes} == {s.id}
        tool_updates = [u["toolCallId"] for u in env.rec.of("tool_call")]
        assert tool_updates == ["call-1", "d-1"]
