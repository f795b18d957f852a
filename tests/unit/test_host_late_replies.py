"""Late replies to pending questions, through the host (behavior.md L1–L6).

A question becomes `continued` when its timed ask returns pending (the test
advances the ManualClock past the deadline). "Busy" sessions keep the turn
running in a second, untimed question (`call-2`) so a reply stays queued
until the test lets that question be answered — the next step boundary.
"""

from __future__ import annotations

import json

import pytest
from host_helpers import (
    Env,
    answer,
    ask_step,
    host_env,
    of_type,
    q,
    replies_admitted,
    script,
    settle,
    state_of,
    text_step,
    types,
    user_texts,
)

from askbridge.core import SessionError, UserQuestionError
from askbridge.host.log import events as ev
from askbridge.protocol import FIXED_MESSAGES, Answer, AnswerItem, ErrorCode

TIMEOUT_MS = 5000


async def pending_session(env: Env, *more_steps: dict, questions: list | None = None) -> str:
    """A session whose call-1 went pending in turn t-1; the script goes on with `more_steps`."""
    s = await env.host.new_session(model=script(ask_step("call-1", questions), *more_steps))
    env.prompt(s.id, "go")
    await settle()
    env.clock.advance(TIMEOUT_MS)
    await settle()
    assert state_of(await env.host.view(s.id), "call-1") == "continued"
    return s.id


async def busy_session(env: Env, *more_steps: dict) -> str:
    """call-1 continued, and the turn still running: blocked in the untimed call-2."""
    sid = await pending_session(
        env, ask_step("call-2", [q("os")], timeout=-1), text_step("after"), *more_steps
    )
    assert env.desk.calls() == ["call-1", "call-2"]
    return sid


def finish_call_2(env: Env) -> None:
    env.desk.reply("call-2", answer(os="x"))


async def expect_code(coro: object, code: str) -> UserQuestionError:
    with pytest.raises(UserQuestionError) as info:
        await coro  # type: ignore[misc]
    assert info.value.code == code
    return info.value


async def queued_events(env: Env, sid: str) -> list[ev.Event]:
    return of_type(await env.log(sid), ev.INBOX_INSERTED)


# -- L1 -------------------------------------------------------------------------------------


async def test_L1_open_question_refuses_a_late_reply_and_queues_nothing() -> None:
    async with host_env() as env:
        s = await env.host.new_session(model=script(ask_step("call-1"), text_step("ok")))
        run = env.prompt(s.id, "go")
        await settle()
        assert state_of(await env.host.view(s.id), "call-1") == "open"
        assert await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="y")) is False
        assert await queued_events(env, s.id) == [] and len(s.inbox) == 0
        # It is still answerable, through the waterfall only.
        env.desk.reply("call-1", answer(db="x"))
        await settle()
        assert run.stop == "end_turn"
        assert state_of(await env.host.view(s.id), "call-1") == "settled"


async def test_L1_unknown_call_legacy_call_or_wrong_agent_refuse() -> None:
    async with host_env() as env:
        sid = await pending_session(env, text_step("ok"))
        assert await env.host.late_answers.answer_reply(sid, "call-404", answer(db="y")) is False
        session = await env.host.get_session(sid)
        batch = answer(db="y").answers
        assert await env.host.service.answer("a-other", sid, "call-1", batch) is False
        assert await queued_events(env, sid) == []
        # The owning agent through the service's late-reply path: accepted.
        assert await env.host.service.answer(session.agent.id, sid, "call-1", batch) is True
    async with host_env(mode="legacy") as env:
        env.desk.reply("*", answer(db="x"))
        s = await env.host.new_session(model=script(ask_step("call-1"), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        assert await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="y")) is False


async def test_L1_unknown_session_is_a_session_error() -> None:
    async with host_env() as env:
        with pytest.raises(SessionError) as info:
            await env.host.late_answers.answer_reply("s-nope", "call-1", answer(db="y"))
        assert info.value.code == ErrorCode.UNKNOWN_SESSION
        assert info.value.message == "unknown session s-nope"


# -- L2 -------------------------------------------------------------------------------------


async def test_L2_second_reply_is_reply_queued_before_bad_answer() -> None:
    async with host_env() as env:
        sid = await busy_session(env)
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await settle()
        err = await expect_code(
            env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")), "REPLY_QUEUED"
        )
        assert err.message == FIXED_MESSAGES[ErrorCode.REPLY_QUEUED]
        bad = Answer(answers=[AnswerItem(id="nope")])  # would be BAD_ANSWER on its own
        await expect_code(env.host.late_answers.answer_reply(sid, "call-1", bad), "REPLY_QUEUED")
        assert len(await queued_events(env, sid)) == 1
        finish_call_2(env)
        await settle()
        assert replies_admitted(await env.log(sid)) == [
            ("call-1", [{"id": "db", "selected": ["y"]}])
        ]


async def test_L2_idle_agent_second_reply_before_admission_is_reply_queued() -> None:
    async with host_env() as env:
        sid = await pending_session(env, text_step("ok"), text_step("thanks"))
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        # No await has let the woken turn run yet: the reply is queued, not admitted.
        await expect_code(
            env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")), "REPLY_QUEUED"
        )
        await settle()
        assert replies_admitted(await env.log(sid)) == [
            ("call-1", [{"id": "db", "selected": ["y"]}])
        ]


# -- L3 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "items",
    [
        [],  # missing
        [AnswerItem(id="db", selected=["x"]), AnswerItem(id="zz")],  # extra
        [AnswerItem(id="db", selected=["x"]), AnswerItem(id="db")],  # duplicate
    ],
    ids=["missing", "extra", "duplicate"],
)
async def test_L3_batch_must_name_each_question_exactly_once(items: list[AnswerItem]) -> None:
    async with host_env() as env:
        sid = await busy_session(env)
        err = await expect_code(
            env.host.late_answers.answer_reply(sid, "call-1", Answer(answers=items)), "BAD_ANSWER"
        )
        assert err.message == (
            "the answer batch for call-1 must name each of its 1 questions exactly once"
        )
        assert await queued_events(env, sid) == []
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")) is True


async def test_L3_two_question_batch_messages_and_skipped_items_are_valid() -> None:
    async with host_env() as env:
        sid = await pending_session(
            env, text_step("ok"), text_step("thanks"), questions=[q("db"), q("os", labels=None)]
        )
        for items in (
            [AnswerItem(id="db")],
            [AnswerItem(id="db"), AnswerItem(id="os"), AnswerItem(id="zz")],
            [AnswerItem(id="db"), AnswerItem(id="db")],
        ):
            err = await expect_code(
                env.host.late_answers.answer_reply(sid, "call-1", Answer(answers=items)),
                "BAD_ANSWER",
            )
            assert err.message == (
                "the answer batch for call-1 must name each of its 2 questions exactly once"
            )
        # V8 applies to late replies too.
        err = await expect_code(
            env.host.late_answers.answer_reply(sid, "call-1", answer(db="zz", os=[])), "BAD_ANSWER"
        )
        assert err.message == 'question db has no option "zz"'
        assert await queued_events(env, sid) == []
        skipped = Answer(answers=[AnswerItem(id="db", selected=[]), AnswerItem(id="os")])
        assert await env.host.late_answers.answer_reply(sid, "call-1", skipped) is True
        await settle()
        assert replies_admitted(await env.log(sid)) == [
            ("call-1", [{"id": "db", "selected": []}, {"id": "os", "selected": []}])
        ]


# -- L4 -------------------------------------------------------------------------------------

REPLY_TEXT = (
    '{"kind":"answer_to_pending_question","tool":"ask_user_question","callId":"call-1",'
    '"questions":[{"id":"db","question":"Which db?","options":[{"label":"x"},{"label":"y"}]}],'
    '"answers":[{"id":"db","selected":["y"]}]}'
)
SOURCE = {"kind": "user-question-reply", "callId": "call-1", "outcome": "answered"}


async def test_L4_idle_agent_wakes_with_the_exact_reply_message() -> None:
    async with host_env() as env:
        sid = await pending_session(env, text_step("ok"), text_step("thanks"))
        assert of_type(await env.log(sid), ev.TURN_END)[-1]["stopReason"] == "end_turn"  # idle now
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        (inserted,) = await queued_events(env, sid)
        assert inserted["message"] == {
            "content": [{"type": "text", "text": REPLY_TEXT}],
            "source": SOURCE,
            "answers": [{"id": "db", "selected": ["y"]}],  # P4 folds these, not the text
        }
        await settle()
        log = await env.log(sid)
        turn2 = log[log.index(inserted) + 1 :]
        assert types(turn2)[:4] == [
            ev.TURN_START,
            ev.USER_MESSAGE,
            ev.INBOX_CLAIMED,
            ev.REQUEST_HEADER,
        ]
        assert turn2[0]["cause"] == "inbox"
        assert turn2[1] == {
            "type": ev.USER_MESSAGE,
            "content": [{"type": "text", "text": REPLY_TEXT}],
            "source": SOURCE,
            "inboxId": inserted["inboxId"],
            "answers": [{"id": "db", "selected": ["y"]}],
        }
        assert turn2[2]["inboxId"] == inserted["inboxId"]
        assert of_type(log, ev.ASSISTANT_MESSAGE)[-1]["text"] == "thanks"  # the next script step
        started = env.rec.of("turn_started", sid)
        assert [u["cause"] for u in started] == ["prompt", "inbox"]
        (shown,) = env.rec.of("user_message", sid)
        assert shown["content"] == [{"type": "text", "text": REPLY_TEXT}]
        assert shown["source"] == SOURCE


async def test_L4_running_agent_admits_the_reply_at_the_next_step_boundary() -> None:
    async with host_env() as env:
        sid = await busy_session(env)
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await settle()
        assert replies_admitted(await env.log(sid)) == []  # the turn is inside call-2
        finish_call_2(env)
        await settle()
        log = await env.log(sid)
        i = log.index(
            next(e for e in log if e["type"] == ev.TOOL_RESULT and e["callId"] == "call-2")
        )
        assert types(log[i + 1 : i + 4]) == [ev.USER_MESSAGE, ev.INBOX_CLAIMED, ev.REQUEST_HEADER]
        assert log[i + 1]["content"][0]["text"] == REPLY_TEXT
        assert len(of_type(log, ev.TURN_START)) == 1  # no separate inbox turn
        assert [u["cause"] for u in env.rec.of("turn_started", sid)] == ["prompt"]


# -- L5 -------------------------------------------------------------------------------------


async def test_L5_withdrawn_reply_leaves_the_question_answerable() -> None:
    async with host_env() as env:
        sid = await busy_session(env)
        assert await env.host.withdraw_reply(sid, "call-1") is False  # nothing queued
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        assert await env.host.withdraw_reply(sid, "call-1") is True
        assert await env.host.withdraw_reply(sid, "call-1") is False
        (discarded,) = of_type(await env.log(sid), ev.INBOX_DISCARDED)
        assert discarded["reason"] == "withdrawn"
        assert state_of(await env.host.view(sid), "call-1") == "continued"
        assert (
            await env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")) is True
        )  # not REPLY_QUEUED
        finish_call_2(env)
        await settle()
        assert replies_admitted(await env.log(sid)) == [
            ("call-1", [{"id": "db", "selected": ["x"]}])
        ]
        assert (
            await env.host.withdraw_reply(sid, "call-1") is False
        )  # admitted: nothing to withdraw


async def test_L5_queued_reply_survives_a_cancelled_turn_until_the_next_prompt() -> None:
    async with host_env() as env:
        sid = await busy_session(env, text_step("next turn"))
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await env.host.cancel(sid)
        await settle()
        log = await env.log(sid)
        assert of_type(log, ev.TURN_END)[-1]["stopReason"] == "cancelled"
        assert len(of_type(log, ev.TURN_START)) == 1  # not admitted at once after a user cancel
        assert replies_admitted(log) == []
        assert (await env.host.get_session(sid)).inbox.queued_reply("call-1") is not None
        assert state_of(await env.host.view(sid), "call-1") == "continued"
        await expect_code(
            env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")), "REPLY_QUEUED"
        )
        run = env.prompt(sid, "next")
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(sid)
        assert of_type(log, ev.TURN_START)[-1]["cause"] == "prompt"
        # Arrival order: the reply came before the prompt.
        assert user_texts(log)[1:] == [REPLY_TEXT, "next"]


async def test_L5_a_reply_arriving_after_a_cancel_wakes_the_idle_agent() -> None:
    async with host_env() as env:
        sid = await busy_session(env, text_step("woken"))
        await env.host.cancel(sid)  # the user cancels while nothing is queued
        await settle()
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await settle()
        log = await env.log(sid)
        assert [t["cause"] for t in of_type(log, ev.TURN_START)] == ["prompt", "inbox"]  # L4
        assert replies_admitted(log) == [("call-1", [{"id": "db", "selected": ["y"]}])]


async def test_L5_reply_before_a_queued_prompt_is_admitted_first() -> None:
    async with host_env() as env:
        sid = await busy_session(env, text_step("p2 done"))
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        run = env.prompt(sid, "P2")
        finish_call_2(env)
        await settle()
        assert run.stop == "end_turn"
        assert user_texts(await env.log(sid)) == ["go", REPLY_TEXT, "P2"]


async def test_L5_prompt_before_a_reply_is_admitted_first() -> None:
    async with host_env() as env:
        sid = await busy_session(env, text_step("p2 done"), text_step("reply seen"))
        run = env.prompt(sid, "P2")
        await settle()
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        finish_call_2(env)
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(sid)
        assert user_texts(log) == ["go", "P2", REPLY_TEXT]
        assert [t["cause"] for t in of_type(log, ev.TURN_START)] == ["prompt", "prompt", "inbox"]


# -- L6 -------------------------------------------------------------------------------------


async def test_L6_admitted_reply_settles_the_question_and_later_replies_are_refused() -> None:
    async with host_env() as env:
        sid = await pending_session(env, text_step("ok"), text_step("thanks"))
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="y")) is True
        await settle()
        view = await env.host.view(sid)
        assert view.active == []
        (settled,) = view.settled
        assert settled.call_id == "call-1"
        assert [a.dump() for a in settled.answers] == [{"id": "db", "selected": ["y"]}]
        assert await env.host.late_answers.answer_reply(sid, "call-1", answer(db="x")) is False
        assert len(await queued_events(env, sid)) == 1
        assert json.loads(user_texts(await env.log(sid))[-1])["answers"] == [
            {"id": "db", "selected": ["y"]}
        ]
