"""Client claims C1–C5 through `service.attach_wait`, on a ManualClock."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import (
    Answerer,
    DeferredClock,
    first_choice,
    make_service,
    question,
    service_on,
    settle,
    timed_ask,
)

from askbridge.core import AbortSignal, ClaimStream, UserQuestionRequest
from askbridge.protocol import PendingResult, WaitFrame

# A broken rule must fail fast, not hang until the suite-wide timeout.
pytestmark = pytest.mark.timeout(20)


async def frames(stream: ClaimStream) -> list[WaitFrame]:
    return [frame async for frame in stream]


async def test_C1_no_wait_yields_nothing() -> None:
    s = make_service()
    assert await frames(s.service.attach_wait("root", "nothing")) == []
    assert await frames(s.service.attach_wait(s.root, "nothing")) == []


async def test_C1_ended_wait_yields_nothing() -> None:
    s = make_service()
    answerer = Answerer(reply=first_choice([question()]))
    s.service.register(answerer)
    await s.service.ask_timed(s.request(), "c1", 1000)
    assert await frames(s.service.attach_wait("root", "c1")) == []


async def test_C1_expired_wait_not_yet_closed_yields_nothing() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        s.clock.advance(1000)
        # The wait expired synchronously; the ask has not finished unwinding yet.
        assert not call.done
        assert await frames(s.service.attach_wait("root", "c1")) == []
    assert call.pending


async def test_C1_claimant_already_gone_yields_nothing_and_leaves_the_timer() -> None:
    s = make_service()
    gone = AbortSignal()
    gone.abort()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        stream = s.service.attach_wait("root", "c1", claimant=gone)
        assert not stream.claimed
        assert await frames(stream) == []
        s.clock.advance(1000)  # the host timer never stopped
        await settle()
    assert call.pending


async def test_C2_deadline_passed_unclaimed_expires_now() -> None:
    """On a loop that has not yet run the due timer, attaching expires the wait itself."""
    clock = DeferredClock()
    service, root = service_on(clock)
    answerer = Answerer()
    async with timed_ask(
        service, UserQuestionRequest(questions=[question()], agent=root), answerer
    ) as (call, _):
        clock.jump(1000)  # at the deadline; the timer callback has not run yet
        wait = service.find_wait("root", "c1")
        assert wait is not None and not wait.expired
        stream = service.attach_wait("root", "c1")
        assert not stream.claimed
        assert wait.expired and wait.signal.aborted
        assert await frames(stream) == []
        await settle()
        assert call.done
    assert call.result == PendingResult(call_id="c1") and answerer.cancelled == 1


async def test_C3_one_frame_with_remaining_time_then_open() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, tg):
        s.clock.advance(250)
        stream = s.service.attach_wait("root", "c1")
        wait = s.service.find_wait("root", "c1")
        assert wait is not None and wait.claim_count == 1
        received: list[WaitFrame] = []
        finished = anyio.Event()

        async def consume() -> None:
            async for frame in stream:
                received.append(frame)
            finished.set()

        tg.start_soon(consume)
        await settle()
        assert [f.dump() for f in received] == [{"remainingMs": 750}]
        s.clock.advance(10_000)  # the host timer is stopped while claimed
        await settle()
        assert not finished.is_set() and not call.done and not wait.expired
        stream.release()
        await settle()
        assert finished.is_set() and call.pending
    assert received == [WaitFrame(remaining_ms=750)]


async def test_C3_frame_is_never_negative() -> None:
    clock = DeferredClock()
    service, root = service_on(clock)
    async with timed_ask(
        service, UserQuestionRequest(questions=[question()], agent=root), Answerer()
    ) as (call, _):
        holder = service.attach_wait("root", "c1")
        clock.jump(3000)
        second = service.attach_wait("root", "c1")  # a claim already exists: no expiry (C2)
        assert [f.remaining_ms for f in await take_first(second)] == [0]
        second.release()
        holder.release()  # the last claim leaves after the deadline
        clock.run_due()
        await settle()
    assert call.pending


async def test_C4_release_by_aclose_is_idempotent_and_rearms() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        stream = s.service.attach_wait("root", "c1")
        other = s.service.attach_wait("root", "c1")
        await stream.aclose()
        await stream.aclose()
        stream.release()
        wait = s.service.find_wait("root", "c1")
        assert wait is not None and wait.claim_count == 1  # the other claim is untouched
        assert await frames(stream) == []  # released before its frame was read: ends at once
        async with other:
            pass  # leaving the context manager releases
        assert wait.claim_count == 0
        s.clock.advance(1000)
        await settle()
    assert call.pending


async def test_C4_released_stream_stops_iterating() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        stream = s.service.attach_wait("root", "c1")
        first = await stream.__anext__()
        assert first.remaining_ms == 1000
        stream.release()
        assert await frames(stream) == []
        s.clock.advance(1000)
        await settle()
    assert call.pending


async def test_C4_cancelling_the_consumer_releases() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, tg):
        stream = s.service.attach_wait("root", "c1")
        consumer = anyio.CancelScope()

        async def consume() -> None:
            with consumer:
                async for _ in stream:
                    pass

        tg.start_soon(consume)
        await settle()
        assert stream.claimed
        s.clock.advance(5000)
        await settle()
        assert not call.done
        consumer.cancel()
        await settle()
        assert not stream.claimed and call.pending


async def test_C4_claimant_disconnect_releases() -> None:
    s = make_service()
    client = AbortSignal()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        stream = s.service.attach_wait("root", "c1", claimant=client)
        assert stream.claimed
        s.clock.advance(1200)
        await settle()
        assert not call.done
        client.abort()  # the client disconnected
        await settle()
        assert not stream.claimed and call.pending
        stream.release()  # harmless afterwards


async def test_C5_several_claims_timer_resumes_after_the_last() -> None:
    s = make_service()
    async with timed_ask(s.service, s.request(), Answerer()) as (call, _):
        a = s.service.attach_wait("root", "c1")
        s.clock.advance(400)
        b = s.service.attach_wait("root", "c1")
        assert (await b.__anext__()).remaining_ms == 600
        wait = s.service.find_wait("root", "c1")
        assert wait is not None and wait.claim_count == 2
        s.clock.advance(1000)
        a.release()
        await settle()
        assert not call.done and s.clock.pending_timers == 0
        b.release()
        await settle()
        assert call.pending


async def test_C5_claims_end_with_the_answer() -> None:
    s = make_service()
    answerer = Answerer()
    async with timed_ask(s.service, s.request(), answerer) as (call, _):
        streams = [s.service.attach_wait("root", "c1") for _ in range(3)]
        answerer.answer(first_choice([question()]))
        await settle()
        assert call.done and not any(stream.claimed for stream in streams)
        for stream in streams:
            assert [f.remaining_ms for f in await frames(stream)] == [1000]


async def take_first(stream: ClaimStream) -> list[WaitFrame]:
    return [await stream.__anext__()]
