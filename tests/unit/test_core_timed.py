"""ask_timed rules TW1–TW5 (checks, private signal, claims vs. the host timer) on a ManualClock.

TW6–TW10 (how a timed wait ends) are in test_core_timed_end.py.
"""

from __future__ import annotations

import anyio
import pytest
from core_helpers import (
    Agent,
    Answerer,
    expect,
    first_choice,
    make_service,
    question,
    settle,
    start_timed,
    timed_ask,
)

from askbridge.core import AbortSignal
from askbridge.protocol import Answer

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)

APPROVAL = {"kind": "approval", "approve": "Yes", "reject": "No"}


# -- TW1 -------------------------------------------------------------------------------------


@pytest.mark.parametrize("timeout_ms", [0, -1, 2147483648, 1.5, True, "10", None])
async def test_TW1_timeout_must_fit_a_positive_platform_timer(timeout_ms: object) -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    await expect(
        s.service.ask_timed(s.request(), "c1", timeout_ms),  # type: ignore[arg-type]
        "BAD_TIMEOUT",
        "timeout must fit a positive platform timer",
    )
    assert answerer.requests == [] and s.service.find_wait("root", "c1") is None


@pytest.mark.parametrize("timeout_ms", [1, 2147483647])
async def test_TW1_timeout_bounds_are_accepted(timeout_ms: int) -> None:
    s = make_service()
    s.service.register(Answerer(reply=first_choice([question()])))
    result = await s.service.ask_timed(s.request(), "c1", timeout_ms)
    assert isinstance(result, Answer)


async def test_TW1_bad_timeout_is_checked_first() -> None:
    s = make_service()
    signal = AbortSignal()
    signal.abort()
    await expect(
        s.service.ask_timed(s.request([], agent=Agent("ghost"), signal=signal), "c1", 0),
        "BAD_TIMEOUT",
    )


async def test_TW1_then_A1_A2_TW2_A5_TW3_in_order() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    aborted = AbortSignal()
    aborted.abort()
    ghost = Agent("ghost")
    approval_q = [question(options=["Yes", "No"], detail="d", intent=APPROVAL)]
    async with anyio.create_task_group() as tg:
        first = start_timed(tg, s.service, s.request(), "dup", 1000)  # holds the (root, dup) slot
        await settle()
        # A1 beats A2, TW2, A5 and TW3.
        await expect(
            s.service.ask_timed(s.request([], agent=ghost, signal=aborted), "dup", 10),
            "ASK_ABORTED",
        )
        # A2 beats TW2.
        await expect(s.service.ask_timed(s.request([], agent=ghost), "dup", 10), "EMPTY_QUESTIONS")
        # TW2 beats A5.
        await expect(
            s.service.ask_timed(s.request(approval_q, agent=ghost), "dup", 10), "CALLER_NOT_LIVE"
        )
        # A5 (approval is BAD_INTENT on a timed wait) beats TW3.
        err = await expect(
            s.service.ask_timed(s.request(approval_q), "dup", 10),
            "BAD_INTENT",
            "question q1 declares intent approval but approval cannot be asked on a timed wait",
        )
        assert err.message.startswith("question q1 declares intent approval")
        await expect(s.service.ask_timed(s.request(), "dup", 10), "DUPLICATE_WAIT")
        assert len(answerer.requests) == 1
        answerer.answer(first_choice([question()]))
    assert isinstance(first.result, Answer)


# -- TW2 -------------------------------------------------------------------------------------


async def test_TW2_caller_agent_is_required() -> None:
    s = make_service()
    answerer = Answerer()
    s.service.register(answerer)
    await expect(s.service.ask_timed(s.request(use_root=False), "c1", 1000), "CALLER_NOT_LIVE")
    assert answerer.requests == []


async def test_TW2_agent_checked_as_A3_and_A4() -> None:
    s = make_service()
    s.service.register(Answerer())
    await expect(s.service.ask_timed(s.request(agent=Agent("root")), "c1", 1000), "CALLER_NOT_LIVE")
    child = Agent("child")
    s.registry.add(child, parent="root", subagent=True)
    await expect(s.service.ask_timed(s.request(agent=child), "c1", 1000), "DELEGATED_CALLER")


# -- TW3 -------------------------------------------------------------------------------------


async def test_TW3_second_foreground_wait_for_the_same_call_is_duplicate() -> None:
    s = make_service()
    other = Agent("other")
    s.registry.add(other)
    answerer = Answerer()
    s.service.register(answerer)
    async with anyio.create_task_group() as tg:
        first = start_timed(tg, s.service, s.request(), "c1")
        await settle()
        await expect(
            s.service.ask_timed(s.request(), "c1", 1000),
            "DUPLICATE_WAIT",
            "the question call already has a foreground wait",
        )
        # Another call id, or the same call id for another agent, is a different wait.
        second = start_timed(tg, s.service, s.request(), "c2")
        third = start_timed(tg, s.service, s.request(agent=other), "c1")
        await settle()
        assert len(answerer.requests) == 3
        assert not first.done and not second.done and not third.done
        answerer.answer(first_choice([question()]))
    assert all(isinstance(c.result, Answer) for c in (first, second, third))


# -- TW4 -------------------------------------------------------------------------------------


async def test_TW4_fixed_deadline_and_private_signal() -> None:
    s = make_service()
    s.clock.advance(5000)
    turn = AbortSignal()
    async with timed_ask(s, signal=turn, timeout_ms=700) as w:
        wait = w.wait()
        assert wait.deadline == 5700
        (seen,) = w.answerer.requests
        assert seen.signal is wait.signal and seen.signal is not turn
        assert seen.wait is not None and seen.wait.dump() == {"callId": "c1", "timed": True}
        await w.advance(699)
        assert not w.call.done and not wait.signal.aborted
        await w.advance(1)
    assert w.call.pending
    assert wait.signal.aborted and not turn.aborted  # only the private signal (TW6)


# -- TW5 -------------------------------------------------------------------------------------


async def test_TW5_timer_runs_only_while_unclaimed() -> None:
    async with timed_ask() as w:
        stream = w.claim()
        assert (await stream.__anext__()).remaining_ms == 1000
        await w.advance(5000)  # far past the deadline, but claimed
        assert not w.call.done
        await stream.aclose()  # released after the deadline: expires on the next tick
        await settle()
        assert w.call.pending


async def test_TW5_claims_never_move_the_deadline() -> None:
    async with timed_ask() as w:
        w.s.clock.advance(100)
        stream = w.claim()
        assert (await stream.__anext__()).remaining_ms == 900
        w.s.clock.advance(500)  # t=600: time spent claimed is not credited back
        stream.release()
        assert w.wait().remaining_ms() == 400
        await w.advance(399)
        assert not w.call.done
        await w.advance(1)  # t=1000, the original deadline
        assert w.call.pending


async def test_TW5_reclaim_after_release_stops_the_timer_again() -> None:
    async with timed_ask() as w:
        w.claim().release()
        w.s.clock.advance(300)
        second = w.claim()
        assert (await second.__anext__()).remaining_ms == 700
        await w.advance(10_000)
        assert not w.call.done
        second.release()
        await settle()
        assert w.call.pending
