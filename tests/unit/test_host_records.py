"""A pending question is a record (architecture.md), in-process with the fake clock.

A window whose link asks with a callback (`ask_with_callback`, as the LSP relay does)
gets every card of a step's asks without a task or coroutine per question:
the turn waits on one future for the whole step, each ask is the core's
record, and the fan-out's `OpenQuestion` holds the cards. The record still
obeys every rule a coroutine did: first answer wins (M2), the turn's cancel
withdraws every card (A9), the deadline makes it pending (TW6), the host's
stop withdraws what waits (TW10) — and nothing it started outlives it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from host_helpers import ask_step, host_env, q, result_of, script, settle, text_step

from askbridge.core import UserQuestionRequest
from askbridge.host.log import events as ev
from askbridge.protocol import Answer, AnswerItem

Outcome = Callable[[Answer | None, Exception | None], None]


class CallbackWindow:
    """A client link that renders questions and asks with a callback, like the LSP relay."""

    renders_questions = True

    def __init__(self) -> None:
        self.cards: dict[str, Outcome] = {}
        self.withdrawn: list[str] = []

    def send_updates(self, session_id: str, updates: list[dict[str, Any]]) -> None:
        pass

    def send_view_changes(self, session_id: str, changes: list[dict[str, Any]]) -> None:
        pass

    def notify_fatal(self, error: Exception) -> None:
        pass

    def ask_with_callback(
        self, request: UserQuestionRequest, on_done: Outcome
    ) -> Callable[[], None]:
        key = request.wait.call_id if request.wait is not None else str(request.extra["toolCallId"])
        self.cards[key] = on_done
        return lambda: self.withdrawn.append(key)

    async def ask(self, request: UserQuestionRequest) -> Answer:
        raise AssertionError("a callback window is never awaited")

    async def fallback(self, request: UserQuestionRequest, next_: Any) -> Answer:
        return await next_()

    def answer(self, call_id: str, label: str) -> None:
        self.cards.pop(call_id)(Answer(answers=[AnswerItem(id="db", selected=[label])]), None)


def many_asks(n: int) -> dict[str, Any]:
    calls = [ask_step(f"call-{i}", [q("db")])["toolCalls"][0] for i in range(n)]
    return {"toolCalls": calls}


async def window_session(env: Any, asks: int) -> tuple[CallbackWindow, Any]:
    """An attached CallbackWindow and a session it created, whose model asks `asks`
    questions in one step, then says ok."""
    window = CallbackWindow()
    client = env.host.attach(window, {})  # type: ignore[arg-type]
    return window, await env.host.new_session(
        client, model=script(many_asks(asks), text_step("ok"))
    )


async def test_M2_a_step_of_asks_waits_as_records_not_tasks() -> None:
    async with host_env(mode="timed", timeout_s=60) as env:
        window, s = await window_session(env, 50)
        await settle()
        before = len(asyncio.all_tasks())
        run = env.prompt(s.id, "go")
        await settle()
        assert sorted(window.cards) == sorted(f"call-{i}" for i in range(50))
        # One task for the prompt's turn and one for the prompt itself; none per question.
        assert len(asyncio.all_tasks()) - before <= 2
        for i in range(50):
            window.answer(f"call-{i}", "y")
        await settle()
        assert run.stop == "end_turn"
        log = await env.log(s.id)
        assert all(result_of(log, f"call-{i}")["outcome"] == "answered" for i in range(50))


async def test_A9_cancelling_the_turn_withdraws_every_card_and_records_the_abort() -> None:
    async with host_env(mode="legacy") as env:
        window, s = await window_session(env, 3)
        run = env.prompt(s.id, "go")
        await settle()
        assert len(window.cards) == 3
        await env.host.cancel(s.id)
        await settle()
        assert run.stop == "cancelled"
        assert sorted(window.withdrawn) == ["call-0", "call-1", "call-2"]
        results = [e for e in await env.log(s.id) if e["type"] == ev.TOOL_RESULT]
        assert [r["error"]["code"] for r in results] == ["ASK_ABORTED"] * 3


async def test_TW6_the_deadline_makes_a_record_pending_and_withdraws_its_card() -> None:
    async with host_env(mode="timed", timeout_s=5) as env:
        window, s = await window_session(env, 2)
        run = env.prompt(s.id, "go")
        await settle()
        window.answer("call-0", "x")  # one answered before the deadline, one not
        env.clock.advance(5000)
        await settle()
        assert run.stop == "end_turn"
        assert "call-1" in window.withdrawn
        log = await env.log(s.id)
        assert result_of(log, "call-0")["outcome"] == "answered"
        assert result_of(log, "call-1")["outcome"] == "pending"
        assert env.host.service.find_wait(s.agent.id, "call-1") is None


async def test_TW10_stopping_the_host_withdraws_what_still_waits() -> None:
    async with host_env(mode="timed", timeout_s=60) as env:
        window, s = await window_session(env, 2)
        env.prompt(s.id, "go")
        await settle()
        assert len(window.cards) == 2
    assert sorted(window.withdrawn) == ["call-0", "call-1"]


async def test_V8_an_answer_is_checked_once(monkeypatch: Any) -> None:
    from askbridge.core import validation
    from askbridge.host.asking import fanout, open_question

    checks: list[str] = []

    def counted(questions: Any, answer: Answer, call_id: str | None = None) -> Answer:
        checks.append(str(call_id))
        return validation.check_answer(questions, answer, call_id)

    monkeypatch.setattr(fanout, "check_answer", counted)
    monkeypatch.setattr(open_question, "check_answer", counted)
    async with host_env(mode="timed", timeout_s=60) as env:
        window, s = await window_session(env, 1)
        run = env.prompt(s.id, "go")
        await settle()
        window.answer("call-0", "y")
        await settle()
        assert run.stop == "end_turn"
    assert checks == ["call-0"]
