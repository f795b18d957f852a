"""The turn loop: session/cancel, queued prompts and max_turn_requests (protocol.md
"Sessions"; behavior.md A9/TW9 for asks cut off by a cancel, P3 for the view)."""

from __future__ import annotations

import anyio
import pytest
from host_helpers import (
    Desk,
    PromptRun,
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
    user_texts,
)

from askbridge.core import ManualClock
from askbridge.host.host import Host
from askbridge.host.log import events as ev
from askbridge.host.store.store_memory import MemoryEventStore
from askbridge.protocol import FIXED_MESSAGES, ErrorCode

ABORTED_TEXT = "Error: " + FIXED_MESSAGES[ErrorCode.ASK_ABORTED]


@pytest.mark.parametrize("mode", ["legacy", "timed"])
async def test_cancel_during_an_ask_ends_it_ASK_ABORTED_and_cancels_queued_prompts(
    mode: str,
) -> None:
    async with host_env(mode=mode) as env:
        s = await env.host.new_session(
            model=script(ask_step("call-1"), text_step("unused"), text_step("after cancel"))
        )
        first = env.prompt(s.id, "go")
        await settle()
        queued = [env.prompt(s.id, "second"), env.prompt(s.id, "third")]
        await settle()
        assert len(env.desk.requests) == 1
        await env.host.cancel(s.id)
        await settle()
        assert first.stop == "cancelled"
        assert [run.stop for run in queued] == ["cancelled", "cancelled"]
        assert len(env.desk.cancelled) == 1  # A9: the answerer was cancelled, not awaited
        log = await env.log(s.id)
        result = result_of(log, "call-1")
        assert result["content"] == ABORTED_TEXT
        assert result["error"] == {"name": "UserQuestionError", "code": "ASK_ABORTED"}
        assert of_type(log, ev.TURN_END) == [
            {"type": ev.TURN_END, "turnId": "t-1", "stopReason": "cancelled"}
        ]
        assert user_texts(log) == ["go"]  # the cancelled prompts never ran
        assert state_of(await env.host.view(s.id), "call-1") is None  # P3: an error drops it
        assert (
            await env.host.late_answers.answer_reply(s.id, "call-1", answer(db="x")) is False
        )  # L1
        (ended,) = env.rec.of("turn_ended", s.id)
        assert ended["stopReason"] == "cancelled"
        # The session goes on: the next prompt runs a normal turn with the next script step.
        nxt = env.prompt(s.id, "again")
        await settle()
        assert nxt.stop == "end_turn"
        assert of_type(await env.log(s.id), ev.ASSISTANT_MESSAGE)[-1]["text"] == "unused"


async def test_cancel_while_idle_is_harmless() -> None:
    async with host_env() as env:
        s = await env.host.new_session(model=script(text_step("hello")))
        await env.host.cancel(s.id)
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "end_turn"


async def test_prompts_sent_during_a_turn_run_in_order_each_with_its_own_turn() -> None:
    async with host_env() as env:
        s = await env.host.new_session(
            model=script(ask_step("call-1"), text_step("one"), text_step("two"))
        )
        first = env.prompt(s.id, "first")
        await settle()
        second = env.prompt(s.id, "second")
        await settle()
        assert second.stop is None  # queued behind the running turn
        env.desk.reply("call-1", answer(db="x"))
        await settle()
        assert (first.stop, second.stop) == ("end_turn", "end_turn")
        log = await env.log(s.id)
        assert user_texts(log) == ["first", "second"]
        assert [t["turnId"] for t in of_type(log, ev.TURN_START)] == ["t-1", "t-2"]


async def test_max_turn_requests_stops_a_looping_turn() -> None:
    loop = [call_step(f"n-{i}", "noop", {}) for i in range(6)]
    async with host_env(max_turn_requests=3) as env:
        s = await env.host.new_session(model=script(*loop))
        run = env.prompt(s.id, "go")
        await settle()
        assert run.stop == "max_turn_requests"
        log = await env.log(s.id)
        assert len(of_type(log, ev.REQUEST_HEADER)) == 3
        assert [r["callId"] for r in of_type(log, ev.TOOL_RESULT)] == ["n-0", "n-1", "n-2"]
        assert result_of(log, "n-0")["error"] == {"name": "ToolError", "code": "UNKNOWN_TOOL"}
        assert of_type(log, ev.TURN_END)[-1]["stopReason"] == "max_turn_requests"
        # The limit is per turn: the next prompt gets three more requests.
        again = env.prompt(s.id, "again")
        await settle()
        assert again.stop == "max_turn_requests"
        assert len(of_type(await env.log(s.id), ev.REQUEST_HEADER)) == 6


async def test_host_shutdown_answers_every_prompt_cancelled() -> None:
    """Callers of `prompt` live outside the host's task group (a front door's handlers):
    leaving the host must answer the running prompt and the queued ones, not strand them."""
    runs = [PromptRun(), PromptRun()]
    async with anyio.create_task_group() as outside:
        async with Host(MemoryEventStore(), clock=ManualClock()) as host:
            host.service.register(Desk())  # never answers
            s = await host.new_session(model=script(ask_step("call-1"), text_step("unused")))

            async def send(run: PromptRun, text: str) -> None:
                run.stop = await host.prompt(s.id, ev.text_content(text))

            for run, text in zip(runs, ("first", "second"), strict=True):
                outside.start_soon(send, run, text)
                await settle()
        await settle()
        assert [run.stop for run in runs] == ["cancelled", "cancelled"]
        outside.cancel_scope.cancel()


class _WaitingModel:
    """A model that waits for its endpoint until the turn is cancelled."""

    async def complete(self, history: object, tools: object, request_index: int) -> object:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")


async def test_cancel_during_a_model_request_logs_its_request_header_once() -> None:
    async with host_env() as env:
        s = await env.host.new_session(model=script(text_step("unused")))
        s.model = _WaitingModel()  # type: ignore[assignment]
        run = env.prompt(s.id, "go")
        await settle()
        await env.host.cancel(s.id)
        await settle()
        assert run.stop == "cancelled"
        log = await env.log(s.id)
        assert len(of_type(log, ev.REQUEST_HEADER)) == 1, [e["type"] for e in log]
        assert of_type(log, ev.TURN_END)[-1]["stopReason"] == "cancelled"
