"""ask_timed rules TW6–TW10: how a timed wait ends (pending, client timeout, no provider,
turn abort, other errors, closing and shutdown), on a ManualClock."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import (
    Agent,
    Answerer,
    WireError,
    assert_error,
    expect,
    first_choice,
    make_service,
    question,
    settle,
    start_timed,
    timed_ask,
)

from askbridge.core import AbortSignal, ToolError, UserQuestionError
from askbridge.protocol import Answer, ErrorCode, PendingResult

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)

# -- TW6 -------------------------------------------------------------------------------------


async def test_TW6_unclaimed_deadline_returns_pending_and_spares_the_turn() -> None:
    turn = AbortSignal()
    async with timed_ask(signal=turn, call_id="call-42") as w:
        await w.advance(1000)
    result, answerer = w.call.result, w.answerer
    assert result == PendingResult(call_id="call-42")
    assert result is not None and result.dump() == {"pending": True, "callId": "call-42"}
    assert not turn.aborted and answerer.cancelled == 1 and answerer.requests[0].signal is not turn


# -- TW7 -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "error",
    [
        UserQuestionError.of(ErrorCode.ASK_TIMED_OUT),
        WireError(
            "local countdown ran out", {"name": "UserQuestionError", "code": "ASK_TIMED_OUT"}
        ),
    ],
)
async def test_TW7_answerer_timed_out_yields_pending(error: Exception) -> None:
    async with timed_ask() as w:
        claim = w.claim()  # the client claimed, then its countdown ran out
        w.s.clock.advance(1500)
        w.answerer.fail(error)
        await settle()
        assert w.call.done and not claim.claimed
    assert w.call.result == PendingResult(call_id="c1")


# -- TW8 -------------------------------------------------------------------------------------


async def test_TW8_no_provider_waits_for_the_deadline_then_pending() -> None:
    async with timed_ask(provider=False) as w:  # no answerer at all
        assert not w.call.done
        await w.advance(999)
        assert not w.call.done
        await w.advance(1)
    assert w.call.result == PendingResult(call_id="c1")


async def test_TW8_no_provider_then_turn_abort_is_ask_aborted() -> None:
    turn = AbortSignal()
    async with timed_ask(signal=turn, provider=False) as w:
        turn.abort()
        await settle()
    assert w.call.error is not None
    assert_error(w.call.error, "ASK_ABORTED")


async def test_TW8_no_provider_wait_can_still_be_claimed() -> None:
    async with timed_ask(provider=False) as w:
        stream = w.claim()
        await w.advance(2000)
        assert not w.call.done
        stream.release()
        await settle()
    assert w.call.pending


# -- TW9 -------------------------------------------------------------------------------------


async def test_TW9_turn_abort_while_waiting_is_ask_aborted() -> None:
    turn = AbortSignal()
    async with timed_ask(signal=turn) as w:
        stream = w.claim()  # even while claimed
        turn.abort()
        await settle()
        assert w.call.done and w.answerer.cancelled == 1 and not stream.claimed
    assert w.call.error is not None
    assert_error(w.call.error, "ASK_ABORTED")


@pytest.mark.parametrize(
    "error",
    [
        UserQuestionError.of(ErrorCode.ASK_CANCELLED),
        ToolError("a tool-level failure", "SOMETHING"),
        UserQuestionError("partial", ErrorCode.BAD_ANSWER),
    ],
)
async def test_TW9_other_errors_are_raised_unchanged(error: Exception) -> None:
    s = make_service()
    answerer = Answerer()
    answerer.fail(error)
    s.service.register(answerer)
    with pytest.raises(type(error)) as info:
        await s.service.ask_timed(s.request(), "c1", 1000)
    assert info.value is error


async def test_TW9_wire_ask_cancelled_stays_ask_cancelled() -> None:
    s = make_service()
    answerer = Answerer()
    answerer.fail(WireError("closed", {"name": "UserQuestionError", "code": "ASK_CANCELLED"}))
    s.service.register(answerer)
    await expect(
        s.service.ask_timed(s.request(), "c1", 1000),
        "ASK_CANCELLED",
        "the user cancelled ask_user_question",
    )


# -- TW10 ------------------------------------------------------------------------------------


async def test_TW10_exit_closes_the_wait_ends_claims_and_frees_the_slot() -> None:
    ended: list[str] = []
    async with timed_ask() as w:
        s, answerer, wait = w.s, w.answerer, w.wait()
        streams = [w.claim() for _ in range(2)]

        async def consume(index: int) -> None:
            async for _ in streams[index]:
                pass
            ended.append(f"stream {index}")

        for i in range(2):
            w.tg.start_soon(consume, i)
        await settle()
        assert ended == []
        answerer.answer(first_choice([question()]))
        await settle()
        assert sorted(ended) == ["stream 0", "stream 1"]
    assert isinstance(w.call.result, Answer)
    assert wait.ended and wait.claim_count == 0 and s.clock.pending_timers == 0
    assert s.service.find_wait("root", "c1") is None
    # The slot is free: the same call can be waited on again.
    answerer.reply = first_choice([question()])
    assert isinstance(await s.service.ask_timed(s.request(), "c1", 1000), Answer)


@pytest.mark.parametrize("outcome", ["pending", "aborted", "error"])
async def test_TW10_every_outcome_frees_the_slot(outcome: str) -> None:
    turn = AbortSignal()
    async with timed_ask(signal=turn) as w:
        if outcome == "pending":
            w.s.clock.advance(1000)
        elif outcome == "aborted":
            turn.abort()
        else:
            w.answerer.fail(UserQuestionError.of(ErrorCode.ASK_CANCELLED))
        await settle()
    assert w.call.done and w.s.service.find_wait("root", "c1") is None
    assert w.s.clock.pending_timers == 0


async def test_TW10_shutdown_closes_every_wait_with_ask_aborted() -> None:
    s = make_service()
    other = Agent("other")
    s.registry.add(other)
    answerer = Answerer()
    s.service.register(answerer, agent_id="root")  # `other` has no answerer: TW8 path
    ended: list[str] = []
    async with anyio.create_task_group() as tg:
        answered = start_timed(tg, s.service, s.request(), "c1", 1000)
        claimed = start_timed(tg, s.service, s.request(), "c2", 1000)
        unanswered = start_timed(tg, s.service, s.request(agent=other), "c3", 1000)
        await settle()
        stream = s.service.attach_wait("root", "c2")

        async def consume() -> None:
            async for _ in stream:
                pass
            ended.append("stream")

        tg.start_soon(consume)
        await settle()
        s.service.shutdown()
        await settle()
    for call in (answered, claimed, unanswered):
        assert call.error is not None
        assert_error(
            call.error, "ASK_ABORTED", "ask_user_question was aborted before the user answered"
        )
    assert ended == ["stream"] and answerer.cancelled == 2
    assert s.service.find_wait("root", "c1") is None and s.clock.pending_timers == 0
    # A shut-down service opens no new wait.
    await expect(s.service.ask_timed(s.request(), "c9", 1000), "ASK_ABORTED")
