"""Results carry their kind (architecture.md): an ask's `tool/result` says what it came to,
and a late reply's user/message (and its inbox item) the batch it answers with.

The tool (and the late reply) renders the model's text once; the log records the
outcome beside it (`outcome`, `answers`), and the projection (P3, P4) and
`askbridge sessions` fold that, never the text. A store written before results
and replies carried their kind still loads into the same view (they are read
from their text, as then).
"""

from __future__ import annotations

import json
from typing import Any

from host_helpers import ANY, answer, ask_step, host_env, q, result_of, script, settle, text_step
from store_helpers import header

from askbridge.cli.sessions import transcript
from askbridge.core import UserQuestionError, tool_outcome_unknown
from askbridge.core import limits as core_limits
from askbridge.host.agent.external_sessions import ExternalSession
from askbridge.host.agent.tools import ToolOutcome
from askbridge.host.log import events as ev
from askbridge.host.log.projection import Projection
from askbridge.protocol import ErrorCode

ASK = "ask_user_question"
TIMED = ev.request_header(
    [{"name": ASK, "parameters": {"type": "object", "properties": {"timeout": {}}}}]
)
DB = {"id": "db", "question": "Which database?", "options": [{"label": "x"}, {"label": "y"}]}
CHOSEN = [{"id": "db", "selected": ["y"]}]


def folded(*results: ev.Event) -> Projection:
    return Projection([TIMED, ev.tool_call("call-1", ASK, {"questions": [DB]}), *results])


def test_P3_an_answered_result_settles_with_its_answers_not_its_text() -> None:
    result = ev.tool_result("call-1", ASK, "not JSON", outcome="answered", answers=CHOSEN)
    assert folded(result).view_dict()["settled"] == [{"callId": "call-1", "answers": CHOSEN}]


def test_P3_a_pending_result_is_continued_whatever_its_text() -> None:
    view = folded(ev.tool_result("call-1", ASK, "{}", outcome="pending")).view_dict()
    assert [(e["callId"], e["state"]) for e in view["active"]] == [("call-1", "continued")]


def test_P3_a_failed_result_drops_the_call_unless_its_outcome_is_unknown() -> None:
    failed = ToolOutcome.failure(UserQuestionError.of(ErrorCode.ASK_CANCELLED))
    assert folded(failed.event("call-1", ASK)).active == {}
    unknown = ToolOutcome.failure(tool_outcome_unknown())  # P7: stays answerable
    assert folded(unknown.event("call-1", ASK)).active["call-1"].state == "continued"


def test_P3_a_store_written_before_results_carried_their_kind_loads_the_same() -> None:
    """The previous version logged only the text: pending JSON, or the answer batch."""
    old_pending = {"type": ev.TOOL_RESULT, "callId": "call-1", "name": ASK, "isError": False}
    old_pending["content"] = '{"pending":true,"callId":"call-1","message":"later"}'
    assert folded(old_pending).active["call-1"].state == "continued"
    old_answer = {**old_pending, "content": '{"answers":[{"id":"db","selected":["y"]}]}'}
    assert folded(old_answer).settled == [("call-1", CHOSEN)]
    new = ToolOutcome.answered(answer(db="y")).event("call-1", ASK)
    assert folded(new).view_dict() == folded(old_answer).view_dict()


def test_T3_T5_T6_each_outcome_renders_its_text_once_and_logs_its_kind() -> None:
    answered = ToolOutcome.answered(answer(db="y"))
    assert answered.content == '{"answers":[{"id":"db","selected":["y"]}]}'
    event = answered.event("c", ASK)
    assert (event["outcome"], event["answers"], event["isError"]) == ("answered", CHOSEN, False)
    pending = ToolOutcome.pending("c").event("c", ASK)
    assert pending["outcome"] == "pending" and '"pending":true' in pending["content"]
    assert "answers" not in pending
    failed = ToolOutcome.failure(UserQuestionError.of(ErrorCode.ASK_CANCELLED)).event("c", ASK)
    assert "outcome" not in failed and failed["error"]["code"] == "ASK_CANCELLED"
    assert "outcome" not in ToolOutcome("a delegate's text").event("c", "delegate")


async def test_T3_the_logged_result_carries_the_answer_the_model_read() -> None:
    async with host_env(mode="timed") as env:
        env.desk.reply(ANY, answer(db="y"))
        s = await env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        result = result_of(await env.log(s.id), "call-1")
        assert result["outcome"] == "answered" and result["answers"] == CHOSEN
        assert result["content"] == '{"answers":[{"id":"db","selected":["y"]}]}'


async def test_S1_a_model_call_is_checked_against_the_limits_once(monkeypatch: Any) -> None:
    checks: list[int] = []
    real = core_limits.check_question_limits

    def counted(questions: Any) -> None:
        checks.append(len(questions))
        real(questions)

    monkeypatch.setattr(core_limits, "check_question_limits", counted)
    async with host_env(mode="legacy") as env:
        env.desk.reply(ANY, answer(db="y"))
        s = await env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        assert result_of(await env.log(s.id), "call-1")["outcome"] == "answered"
    assert checks == [1]


def reply(text: str, **typed: Any) -> list[ev.Event]:
    """call-1 went pending, then a late reply to it was queued and admitted (L4, L6)."""
    content, source = ev.text_content(text), ev.reply_source("call-1")
    return [
        ev.tool_result("call-1", ASK, "{}", outcome="pending"),
        ev.inbox_inserted("in-1", "next-step", content, source, **typed),
        ev.inbox_claimed("in-1"),
        ev.user_message(content, source=source, inbox_id="in-1", **typed),
    ]


OLD_REPLY_TEXT = (
    '{"kind":"answer_to_pending_question","tool":"ask_user_question","callId":"call-1",'
    '"questions":[],"answers":[{"id":"db","selected":["y"]}]}'
)


def test_P4_a_late_reply_settles_with_its_typed_answers_not_its_text() -> None:
    """The text says x (or is not JSON at all): the fold takes the logged batch, y."""
    says_x = OLD_REPLY_TEXT.replace('["y"]', '["x"]')
    for text in (says_x, "not JSON"):
        settled = folded(*reply(text, answers=CHOSEN)).view_dict()["settled"]
        assert settled == [{"callId": "call-1", "answers": CHOSEN}]


def test_P4_a_malformed_typed_batch_settles_empty_without_reading_the_text() -> None:
    assert folded(*reply(OLD_REPLY_TEXT, answers=[{"id": 1}])).settled == [("call-1", [])]


def test_P4_a_reply_logged_before_replies_carried_answers_loads_the_same() -> None:
    """The previous version logged only the text (no `answers` key): it is read from it."""
    old = reply(OLD_REPLY_TEXT)
    assert "answers" not in old[-1] and "answers" not in old[1]["message"]
    assert folded(*old).settled == [("call-1", CHOSEN)]
    new = reply(OLD_REPLY_TEXT, answers=CHOSEN)
    assert folded(*new).view_dict() == folded(*old).view_dict()


def test_P4_L4_askbridge_sessions_shows_the_typed_answers_of_a_reply() -> None:
    says_x = OLD_REPLY_TEXT.replace('["y"]', '["x"]')
    for events, shown in ((reply(says_x, answers=CHOSEN), "y"), (reply(OLD_REPLY_TEXT), "y")):
        lines = [line for line in transcript([header("s-1"), *events]) if "late reply" in line]
        assert len(lines) == 2 and all(line.endswith(f"db: {shown}") for line in lines), lines


async def test_L4_a_taken_reply_is_logged_with_the_batch_its_text_renders() -> None:
    async with host_env(mode="timed") as env:
        s = await env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        env.clock.advance(5000)  # the timed wait ends: call-1 went pending
        await settle()
        assert await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="y"))
        await settle()
        log = await env.log(s.id)
        (inserted,) = [e for e in log if e["type"] == ev.INBOX_INSERTED]
        (admitted,) = [e for e in log if e["type"] == ev.USER_MESSAGE and "source" in e]
        for message in (inserted["message"], admitted):
            assert message["answers"] == CHOSEN
            rendered = json.loads(message["content"][0]["text"])
            assert (rendered["callId"], rendered["answers"]) == ("call-1", CHOSEN)


async def test_X4_P4_get_answers_gives_a_replys_typed_batch_not_its_text() -> None:
    """An MCP session's `get_answers` entry: the queued reply's logged batch (y) and its
    call's questions, though the text says x; a reply queued before replies carried their
    answers is still read from its text."""
    says_x = OLD_REPLY_TEXT.replace('["y"]', '["x"]')
    for typed, text in (({"answers": CHOSEN}, says_x), ({}, OLD_REPLY_TEXT)):
        async with host_env() as env:
            s = await env.host.new_session(model=script(text_step("ok")))
            await s.log(ev.request_header(TIMED["tools"]))  # a timed ask
            external = ExternalSession(s, object())
            queued = reply(text, **typed)[:2]  # pending, then queued: not yet admitted
            await s.log(ev.tool_call("call-1", ASK, {"questions": [DB]}), *queued)
            [entry] = await external.take_replies()
            assert (entry["callId"], entry["answers"]) == ("call-1", CHOSEN)
            if typed:
                assert [question["id"] for question in entry["questions"]] == ["db"]
            assert await external.take_replies() == []  # delivered once (L6)
