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
    settle,
    timed_ask,
)

from askbridge.core import AbortSignal, ClaimStream
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
    async with timed_ask() as w:
        w.s.clock.advance(1000)
        # The wait expired synchronously; the ask has not finished unwinding yet.
        assert not w.call.done
        assert await frames(w.claim()) == []
    assert w.call.pending


async def test_C1_claimant_already_gone_yields_nothing_and_leaves_the_timer() -> None:
    gone = AbortSignal()
    gone.abort()
    async with timed_ask() as w:
        stream = w.claim(claimant=gone)
        assert not stream.claimed
        assert await frames(stream) == []
        await w.advance(1000)  # the host timer never stopped
    assert w.call.pending


async def test_C2_deadline_passed_unclaimed_expires_now() -> None:
    """On a loop that has not yet run the due timer, attaching expires the wait itself."""
    async with timed_ask(make_service(DeferredClock())) as w:
        w.s.clock.jump(1000)  # at the deadline; the timer callback has not run yet
        wait = w.wait()
        assert not wait.expired
        stream = w.claim()
        assert not stream.claimed
        assert wait.expired and wait.signal.aborted
        assert await frames(stream) == []
        await settle()
        assert w.call.done
    assert w.call.result == PendingResult(call_id="c1") and w.answerer.cancelled == 1


async def test_C3_one_frame_with_remaining_time_then_open() -> None:
    async with timed_ask() as w:
        w.s.clock.advance(250)
        stream = w.claim()
        wait = w.wait()
        assert wait.claim_count == 1
        received: list[WaitFrame] = []
        finished = anyio.Event()

        async def consume() -> None:
            async for frame in stream:
                received.append(frame)
            finished.set()

        w.tg.start_soon(consume)
        await settle()
        assert [f.dump() for f in received] == [{"remainingMs": 750}]
        await w.advance(10_000)  # the host timer is stopped while claimed
        assert not finished.is_set() and not w.call.done and not wait.expired
        stream.release()
        await settle()
        assert finished.is_set() and w.call.pending
    assert received == [WaitFrame(remaining_ms=750)]


async def test_C3_frame_is_never_negative() -> None:
    async with timed_ask(make_service(DeferredClock())) as w:
        holder = w.claim()
        w.s.clock.jump(3000)
        second = w.claim()  # a claim already exists: no expiry (C2)
        assert [f.remaining_ms for f in await take_first(second)] == [0]
        second.release()
        holder.release()  # the last claim leaves after the deadline
        w.s.clock.run_due()
        await settle()
    assert w.call.pending


async def test_C4_release_by_aclose_is_idempotent_and_rearms() -> None:
    async with timed_ask() as w:
        stream, other = w.claim(), w.claim()
        await stream.aclose()
        await stream.aclose()
        stream.release()
        wait = w.wait()
        assert wait.claim_count == 1  # the other claim is untouched
        assert await frames(stream) == []  # released before its frame was read: ends at once
        async with other:
            pass  # leaving the context manager releases
        assert wait.claim_count == 0
        await w.advance(1000)
    assert w.call.pending


async def test_C4_released_stream_stops_iterating() -> None:
    async with timed_ask() as w:
        stream = w.claim()
        assert (await stream.__anext__()).remaining_ms == 1000
        stream.release()
        assert await frames(stream) == []
        await w.advance(1000)
    assert w.call.pending


async def test_C4_cancelling_the_consumer_releases() -> None:
    async with timed_ask() as w:
        stream = w.claim()
        consumer = anyio.CancelScope()

        async def consume() -> None:
            with consumer:
                async for _ in stream:
                    pass

        w.tg.start_soon(consume)
        await settle()
        assert stream.claimed
        await w.advance(5000)
        assert not w.call.done
        consumer.cancel()
        await settle()
        assert not stream.claimed and w.call.pending


async def test_C4_claimant_disconnect_releases() -> None:
    client = AbortSignal()
    async with timed_ask() as w:
        stream = w.claim(claimant=client)
        assert stream.claimed
        await w.advance(1200)
        assert not w.call.done
        client.abort()  # the client disconnected
        await settle()
        assert not stream.claimed and w.call.pending
        stream.release()  # harmless afterwards


async def test_C5_several_claims_timer_resumes_after_the_last() -> None:
    async with timed_ask() as w:
        a = w.claim()
        w.s.clock.advance(400)
        b = w.claim()
        assert (await b.__anext__()).remaining_ms == 600
        assert w.wait().claim_count == 2
        w.s.clock.advance(1000)
        a.release()
        await settle()
        assert not w.call.done and w.s.clock.pending_timers == 0
        b.release()
        await settle()
        assert w.call.pending


async def test_C5_claims_end_with_the_answer() -> None:
    async with timed_ask() as w:
        streams = [w.claim() for _ in range(3)]
        w.answerer.answer(first_choice([question()]))
        await settle()
        assert w.call.done and not any(stream.claimed for stream in streams)
        for stream in streams:
            assert [f.remaining_ms for f in await frames(stream)] == [1000]


async def take_first(stream: ClaimStream) -> list[WaitFrame]:
    return [await stream.__anext__()]
