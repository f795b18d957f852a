"""`jsonrpc.Inbound`, the read side's protocol, driven by hand (S7, S8).

A fake transport records `pause_reading`/`resume_reading`; `data_received` is called
the way a read pipe's transport calls it. What a body does is the test's `on_body`:
a body starting `r` is "a request" (work the read task awaits), anything else "a
response" (done inside `on_body`, as `Connection._dispatch` takes one).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.jsonrpc import FrameProblem, Inbound, LineFramer, LspFramer
from askbridge.jsonrpc.inbound import HOLD_BYTES


def lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class Transport(asyncio.ReadTransport):
    def __init__(self) -> None:
        super().__init__()
        self.paused = False
        self.flips: list[str] = []

    def pause_reading(self) -> None:
        self.paused = True
        self.flips.append("pause")

    def resume_reading(self) -> None:
        self.paused = False
        self.flips.append("resume")


class Out:
    """The output's S7 side: `writable()` until the test backs it up."""

    def __init__(self) -> None:
        self.backed_up = False
        self.drained = asyncio.Event()

    def writable(self) -> bool:
        return not self.backed_up

    async def wait_writable(self) -> None:
        await self.drained.wait()
        self.backed_up = False


class Reader:
    def __init__(self, framer: Any = None) -> None:
        self.inbound = Inbound(framer if framer is not None else LspFramer())
        self.transport = Transport()
        self.inbound.connection_made(self.transport)
        self.out = Out()
        self.seen: list[bytes] = []  # bodies, in the order they were handled
        self.replies: list[dict[str, Any]] = []
        self.release = asyncio.Event()  # what a request's work waits for
        self.task: asyncio.Task[None] | None = None

    def on_body(self, body: bytes) -> Awaitable[None] | None:
        if body.startswith(b"boom"):
            raise RuntimeError("a dispatch that raises")
        if body.startswith(b"r"):
            return self._request(body)
        self.seen.append(body)
        return None

    async def _request(self, body: bytes) -> None:
        await self.release.wait()
        self.seen.append(body)

    def start(self) -> asyncio.Task[None]:
        self.task = asyncio.ensure_future(
            self.inbound.serve(self.out, self.on_body, self.replies.append)
        )
        return self.task


async def turns(n: int = 3) -> None:
    for _ in range(n):
        await asyncio.sleep(0)


@asynccontextmanager
async def reading(framer: Any = None) -> AsyncIterator[Reader]:
    """A Reader whose read task runs; at the end, end of input must end it."""
    r = Reader(framer)
    task = r.start()
    await turns()
    yield r
    r.inbound.eof_received()
    await asyncio.wait_for(task, 5)


async def test_a_response_is_dispatched_inside_data_received() -> None:
    async with reading() as r:
        r.inbound.data_received(lsp(b"answer"))
        assert r.seen == [b"answer"]  # no loop turn in between


async def test_a_response_behind_a_request_waits_for_the_request() -> None:
    async with reading() as r:
        r.inbound.data_received(lsp(b"req-1") + lsp(b"answer-1"))
        r.inbound.data_received(lsp(b"answer-2"))
        await turns()
        assert r.seen == []  # the request's work holds every frame behind it
        r.release.set()
        await turns()
        assert r.seen == [b"req-1", b"answer-1", b"answer-2"]
        r.inbound.data_received(lsp(b"answer-3"))
        assert r.seen[-1] == b"answer-3"  # idle again: straight from data_received


async def test_frames_before_serve_and_before_the_framer_are_kept_in_order() -> None:
    inbound = Inbound()
    transport = Transport()
    inbound.connection_made(transport)
    inbound.data_received(b'{"a":1}\n{"b"')
    inbound.data_received(b":2}\n")
    inbound.eof_received()
    inbound.use(LineFramer())
    seen: list[bytes] = []
    await asyncio.wait_for(inbound.serve(Out(), seen.append, print), 5)
    assert seen == [b'{"a":1}', b'{"b":2}']


async def test_S7_the_transport_is_paused_while_output_backs_up_and_resumed_after() -> None:
    async with reading() as r:
        r.out.backed_up = True
        r.inbound.data_received(lsp(b"answer-1"))
        assert r.seen == [] and r.transport.paused  # nothing taken while the peer does not read
        await turns()
        assert r.transport.paused
        r.out.drained.set()
        await turns()
        assert r.seen == [b"answer-1"] and not r.transport.paused
        assert r.transport.flips == ["pause", "resume"]


async def test_a_busy_read_task_pauses_the_transport_once_enough_is_buffered() -> None:
    async with reading() as r:
        r.inbound.data_received(lsp(b"req"))
        r.inbound.data_received(lsp(b"x" * HOLD_BYTES))
        assert r.transport.paused
        r.release.set()
        await turns()
        assert not r.transport.paused and r.seen == [b"req", b"x" * HOLD_BYTES]


async def test_a_dispatch_that_raises_is_logged_and_reading_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with reading() as r:
        with caplog.at_level(logging.ERROR, "askbridge.jsonrpc"):
            r.inbound.data_received(lsp(b"answer-1") + lsp(b"boom") + lsp(b"answer-2"))
        assert r.seen == [b"answer-1", b"answer-2"]
        assert "dispatching a frame failed" in caplog.text
        r.inbound.data_received(lsp(b"answer-3"))
        assert r.seen[-1] == b"answer-3" and not r.task.done()  # type: ignore[union-attr]


async def test_a_problem_frame_is_answered_and_the_next_frame_read() -> None:
    async with reading(LspFramer(max_body=4)) as r:
        r.inbound.data_received(lsp(b"too long") + lsp(b"ok"))
        assert r.seen == [b"ok"]
        assert r.replies[0]["id"] is None and r.replies[0]["error"]["code"] == -32600
        assert FrameProblem.OVERSIZED.value in r.replies[0]["error"]["message"]


async def test_end_of_input_waits_for_the_frames_before_it() -> None:
    r = Reader()
    r.start()
    await turns()
    r.inbound.data_received(lsp(b"req") + lsp(b"answer"))
    r.inbound.eof_received()
    r.inbound.connection_lost(None)
    await turns()
    assert not r.task.done()  # type: ignore[union-attr]
    r.release.set()
    await asyncio.wait_for(r.task, 5)  # type: ignore[arg-type]
    assert r.seen == [b"req", b"answer"]


async def test_a_transport_lost_with_an_error_raises_it_from_serve() -> None:
    r = Reader()
    r.start()
    await turns()
    r.inbound.data_received(lsp(b"answer"))
    r.inbound.connection_lost(OSError(5, "EIO"))
    with pytest.raises(OSError, match="EIO"):
        await asyncio.wait_for(r.task, 5)  # type: ignore[arg-type]
    assert r.seen == [b"answer"]


@settings(max_examples=60, deadline=None)
@given(
    bodies=st.lists(st.binary(min_size=1, max_size=200).filter(lambda b: b"\n" not in b)),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
    lines=st.booleans(),
)
def test_any_split_into_data_received_yields_the_same_frames(
    bodies: list[bytes], cuts: list[int], lines: bool
) -> None:
    """Framing in the protocol does not depend on how the transport splits the bytes."""
    bodies = [b.strip() or b"x" for b in bodies] if lines else bodies
    stream = b"".join(b + b"\n" if lines else lsp(b) for b in bodies)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})

    async def run() -> list[bytes]:
        inbound = Inbound(LineFramer() if lines else LspFramer())
        inbound.connection_made(Transport())
        got: list[bytes] = []
        task = asyncio.ensure_future(inbound.serve(Out(), got.append, print))
        await asyncio.sleep(0)
        for start, end in itertools.pairwise(points):
            inbound.data_received(stream[start:end])
        inbound.eof_received()
        await asyncio.wait_for(task, 5)
        return got

    assert asyncio.run(run()) == bodies


@pytest.mark.parametrize(
    ("make", "stream"),
    [
        (
            lambda: LspFramer(max_body=16),
            lsp(b'{"a":1}')
            + b"garbage\r\n\r\n"
            + lsp(b"x" * 40)
            + b"content-length: 2\r\nX-Other: y\r\n\r\n{}"
            + lsp(b'{"b":2}'),
        ),
        (lambda: LineFramer(max_line=16), b'{"a":1}\n' + b"y" * 40 + b'\n\r\n{"b":2}\r\n{"c":3}'),
    ],
)
async def test_byte_by_byte_yields_what_one_chunk_yields(make: Any, stream: bytes) -> None:
    """Problem frames, resync and the oversized discard do not depend on the split either."""

    async def frames(chunks: list[bytes]) -> list[tuple[bytes, Any]]:
        inbound = Inbound(make())
        inbound.connection_made(Transport())
        got: list[tuple[bytes, Any]] = []
        task = asyncio.ensure_future(
            inbound.serve(Out(), lambda b: got.append((b, None)), lambda e: got.append((b"", e)))
        )
        await asyncio.sleep(0)
        for chunk in chunks:
            inbound.data_received(chunk)
        inbound.eof_received()
        await asyncio.wait_for(task, 5)
        return [(body, err and err["error"]["message"]) for body, err in got]

    whole = await frames([stream])
    assert await frames([stream[i : i + 1] for i in range(len(stream))]) == whole
    assert [body for body, err in whole if err is None][-1] in (b'{"b":2}', b'{"c":3}')
    assert any(err for _, err in whole)  # the problem frames were answered
