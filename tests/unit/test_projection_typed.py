"""Results carry their kind (architecture.md): an ask's `tool/result` says what it came to.

The tool renders the model's text once; the log records the outcome beside it
(`outcome`, `answers`), and the projection (P3) and `askbridge sessions` fold
that, never the text. A store written before results carried their kind still
loads into the same view (its results are read from their text, as then).
"""

from __future__ import annotations

from typing import Any

from host_helpers import ANY, answer, ask_step, host_env, q, result_of, script, settle, text_step

from askbridge.core import UserQuestionError, tool_outcome_unknown
from askbridge.core import limits as core_limits
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
        s = env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        result = result_of(env.log(s.id), "call-1")
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
        s = env.host.new_session(model=script(ask_step("call-1", [q("db")]), text_step("ok")))
        env.prompt(s.id, "go")
        await settle()
        assert result_of(env.log(s.id), "call-1")["outcome"] == "answered"
    assert checks == [1]
