"""MessageWriter's coalescing (jsonrpc/writer.py), over a real pipe: order kept, nothing held back.

Frames queued in one event-loop iteration go out in one write; notifications
(`urgent=False`) wait for the next request/reply or at most `notify_delay`.
What a client can observe, and what is checked here: frames arrive whole, in
the order queued, and a lone notification still arrives on its own. (That
they share writes is what benchmarks/bench_bridge_sequential.py measures.)
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from askbridge.jsonrpc.flushing import flushes_of
from askbridge.jsonrpc.framing import FrameReader
from askbridge.jsonrpc.stdio import open_read_pipe, open_write_pipe
from askbridge.jsonrpc.writer import FLUSH_BYTES, MessageWriter

pytestmark = pytest.mark.timeout(20)


@asynccontextmanager
async def writer_and_reader(
    notify_delay: float,
) -> AsyncIterator[tuple[MessageWriter, FrameReader]]:
    read_fd, write_fd = os.pipe()
    reader = await open_read_pipe(read_fd)
    stream = await open_write_pipe(write_fd)
    try:
        yield MessageWriter(stream, notify_delay=notify_delay), FrameReader(reader)
    finally:
        stream.close()
        await stream.wait_closed()


async def receive(frames: FrameReader) -> Any:
    with anyio.fail_after(5):
        got = await frames.next_frame()
    assert got is not None and got.problem is None, got
    return json.loads(got.body)


async def test_notifications_and_replies_leave_in_the_order_queued() -> None:
    """Held notifications go out ahead of the urgent frame that releases them, never after."""
    async with writer_and_reader(notify_delay=60) as (writer, frames):
        writer.write_nowait({"n": 1}, urgent=False)
        writer.write_nowait({"n": 2}, urgent=False)
        await writer.write({"n": 3})  # a reply: released at the next loop iteration
        writer.write_nowait({"n": 4}, urgent=False)
        writer.write_nowait({"n": 5})  # urgent, like a reply or a card
        assert [await receive(frames) for _ in range(5)] == [{"n": n} for n in range(1, 6)]


async def test_a_lone_notification_arrives_within_the_delay() -> None:
    """Nothing follows the notification: the timer releases it."""
    async with writer_and_reader(notify_delay=0.001) as (writer, frames):
        writer.write_nowait({"method": "session/update"}, urgent=False)
        assert await receive(frames) == {"method": "session/update"}


async def test_flush_hands_held_frames_over_at_once() -> None:
    """flush() (what serve() does before the stream is closed) writes what is held."""
    async with writer_and_reader(notify_delay=60) as (writer, frames):
        writer.write_nowait({"last": True}, urgent=False)
        writer.flush()
        assert await receive(frames) == {"last": True}


async def test_a_large_burst_is_written_without_waiting_for_the_loop() -> None:
    """Past FLUSH_BYTES the buffer goes to the transport at once, so drain() sees it and a
    writer that never yields still gets backpressure instead of an ever-growing buffer."""
    async with writer_and_reader(notify_delay=60) as (writer, frames):
        pad = "x" * (FLUSH_BYTES // 4)
        for i in range(4):
            writer.write_nowait({"i": i, "pad": pad}, urgent=False)
        # Neither an urgent frame nor the 60 s timer can release these: only the size can.
        got = [await receive(frames) for _ in range(4)]
        assert [g["i"] for g in got] == [0, 1, 2, 3]


async def test_writers_on_one_loop_each_release_their_notifications_by_their_own_delay() -> None:
    """One timer serves every writer of the loop (flushing.py): a writer with a long delay
    does not hold back one with a short delay, nor the other way round."""
    async with (
        writer_and_reader(notify_delay=0.2) as (slow, slow_frames),
        writer_and_reader(notify_delay=0.001) as (fast, fast_frames),
    ):
        slow.write_nowait({"slow": 1}, urgent=False)
        fast.write_nowait({"fast": 1}, urgent=False)
        assert await receive(fast_frames) == {"fast": 1}
        assert await receive(slow_frames) == {"slow": 1}


async def test_a_notification_after_an_urgent_flush_still_leaves_within_the_delay() -> None:
    """The urgent frame took what was held; what is queued after it gets its own deadline."""
    async with writer_and_reader(notify_delay=0.001) as (writer, frames):
        writer.write_nowait({"n": 1}, urgent=False)
        writer.write_nowait({"n": 2})  # urgent: both leave in the next loop turn
        assert [await receive(frames) for _ in range(2)] == [{"n": 1}, {"n": 2}]
        writer.write_nowait({"n": 3}, urgent=False)
        assert await receive(frames) == {"n": 3}


async def test_a_batch_holds_the_next_turns_frames_until_its_outermost_end() -> None:
    """The group commit's batch (flushing.py): what is due "in the next turn" leaves when the
    outermost batch closes, synchronously; held notifications still wait for an urgent
    frame."""
    async with writer_and_reader(notify_delay=5) as (writer, frames):
        flushes = flushes_of(asyncio.get_running_loop())
        flushes.open_batch()
        writer.write_nowait({"n": 1}, urgent=False)
        flushes.open_batch()
        writer.write_nowait({"n": 2})
        flushes.close_batch()
        assert writer.queued()  # an inner batch's end is not the turn's
        flushes.close_batch()
        assert writer.queued() == 0  # written now, not a turn later
        assert [await receive(frames) for _ in range(2)] == [{"n": 1}, {"n": 2}]
        flushes.open_batch()
        writer.write_nowait({"n": 3}, urgent=False)
        flushes.close_batch()
        assert writer.queued()  # a notification alone still waits for its delay
        writer.flush()
        assert await receive(frames) == {"n": 3}


class _BrokenWriter:
    """A writer whose `flush` raises (none of ours does today; Flushable is a protocol)."""

    def __init__(self) -> None:
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        raise RuntimeError("broken writer")


async def test_a_writer_whose_flush_raises_does_not_strand_the_writers_after_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """flushing.py: a writer asks once until it has flushed, so one skipped because an
    earlier writer raised would never be written again; each writer runs on its own, in the next turn, at a batch's end and at a held deadline alike."""
    async with writer_and_reader(notify_delay=0.01) as (writer, frames):
        flushes = flushes_of(asyncio.get_running_loop())
        broken = _BrokenWriter()
        flushes.next_turn(broken)
        writer.write_nowait({"n": 1})  # urgent: due in the next turn, after the broken one
        assert await receive(frames) == {"n": 1}
        flushes.open_batch()
        flushes.next_turn(broken)
        writer.write_nowait({"n": 2})
        flushes.close_batch()  # does not raise
        assert writer.queued() == 0  # all ran at the batch's end
        assert await receive(frames) == {"n": 2}
        flushes.hold(broken, 0.0)
        writer.write_nowait({"n": 3}, urgent=False)  # held for its delay, after the broken one
        assert await receive(frames) == {"n": 3}
        assert broken.flushes == 3  # the held one is released, not found due by every timer
        writer.write_nowait({"n": 4}, urgent=False)
        assert await receive(frames) == {"n": 4}
        assert broken.flushes == 3
    assert caplog.text.count("flushing failed") == 3
