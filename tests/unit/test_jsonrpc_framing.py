"""LSP base-protocol framing over real OS pipes (protocol.md "Errors": the 8 MiB cap,
malformed-header resync, end of input).

Each test writes raw bytes into one end of an os.pipe() and reads `Frame`s from
the other end through the same `open_read_pipe`/`open_write_pipe` helpers
`askbridge serve` uses on stdio.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from askbridge.jsonrpc.framing import (
    MAX_BODY,
    BadHeader,
    Frame,
    FrameProblem,
    FrameReader,
    parse_header_block,
)
from askbridge.jsonrpc.stdio import open_read_pipe, open_write_pipe
from askbridge.jsonrpc.writer import MessageWriter


def frame(body: bytes, header: bytes = b"Content-Length") -> bytes:
    return header + b": %d\r\n\r\n" % len(body) + body


class RawPipe:
    """The writing end of a pipe, driven with plain os.write like a client process would."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


async def feed(raw: RawPipe, data: bytes) -> None:
    """Write more than a pipe buffer holds from a thread, then close, like a client would."""
    await anyio.to_thread.run_sync(raw.send, data)
    raw.close()


@asynccontextmanager
async def pipe_frames(**kwargs: int) -> AsyncIterator[tuple[RawPipe, FrameReader]]:
    read_fd, write_fd = os.pipe()
    reader = await open_read_pipe(read_fd)
    raw = RawPipe(write_fd)
    try:
        yield raw, FrameReader(reader, **kwargs)
    finally:
        raw.close()


async def next_frame(frames: FrameReader) -> Frame | None:
    with anyio.fail_after(5):
        return await frames.next_frame()


async def collect(frames: FrameReader) -> list[Frame]:
    with anyio.fail_after(5):
        return [f async for f in frames]


async def test_split_reads_are_reassembled() -> None:
    async with pipe_frames() as (raw, frames):
        task = asyncio.ensure_future(frames.next_frame())
        raw.send(b"Content-Le")
        await asyncio.sleep(0.02)
        assert not task.done()
        raw.send(b'ngth: 14\r\n\r\n{"a":')
        await asyncio.sleep(0.02)
        assert not task.done()
        raw.send(b'"\xc3\xa9\xc3\xa9xx"}')
        with anyio.fail_after(5):
            got = await task
        assert got == Frame(body='{"a":"ééxx"}'.encode())


async def test_several_frames_in_one_chunk_come_out_in_order() -> None:
    async with pipe_frames() as (raw, frames):
        raw.send(frame(b"[1]") + frame(b"[2]") + frame(b"[3]"))
        raw.close()
        assert [f.body for f in await collect(frames)] == [b"[1]", b"[2]", b"[3]"]


async def test_header_names_are_case_insensitive_and_extra_headers_ignored() -> None:
    async with pipe_frames() as (raw, frames):
        raw.send(frame(b"{}", header=b"content-length"))
        raw.send(frame(b"[]", header=b"CONTENT-LENGTH"))
        raw.send(b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame(b"1"))
        raw.send(b"Content-Length: 1\r\nX-Whatever: yes\r\n\r\n2")
        raw.close()
        assert [f.body for f in await collect(frames)] == [b"{}", b"[]", b"1", b"2"]


async def test_oversized_body_is_discarded_unparsed_and_next_frame_served() -> None:
    """protocol.md Errors: a body over the cap is refused and its bytes discarded unparsed."""
    hidden = frame(b'"smuggled"')  # looks like a frame, but is the oversized body
    body = hidden + b"x" * (40 - len(hidden))
    async with pipe_frames(max_body=32) as (raw, frames):
        raw.send(frame(body) + frame(b'"next"'))
        raw.close()
        got = await collect(frames)
    assert [f.problem for f in got] == [FrameProblem.OVERSIZED, None]
    assert got[0].detail == "Content-Length 40 exceeds 32"
    assert got[1].body == b'"next"'


async def test_default_cap_is_8_mib_and_discarding_streams_without_buffering() -> None:
    """protocol.md Errors: Content-Length above 8 MiB is skipped without holding it in memory."""
    assert MAX_BODY == 8 * 1024 * 1024
    big = frame(b"a" * (MAX_BODY + 1)) + frame(b'"after"')
    exact = frame(b"[" + b" " * (MAX_BODY - 2) + b"]")
    async with pipe_frames() as (raw, frames):
        tracemalloc.start()
        try:
            writer = asyncio.ensure_future(anyio.to_thread.run_sync(raw.send, big))
            oversized = await next_frame(frames)
            after = await next_frame(frames)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        await writer
        assert oversized is not None and oversized.problem is FrameProblem.OVERSIZED
        assert after == Frame(body=b'"after"')
        assert peak < MAX_BODY // 8, peak
        writer = asyncio.ensure_future(anyio.to_thread.run_sync(raw.send, exact))
        at_cap = await next_frame(frames)
        await writer
        assert at_cap is not None and at_cap.problem is None and len(at_cap.body) == MAX_BODY


async def test_garbage_line_resyncs_at_next_content_length() -> None:
    """protocol.md Errors: a malformed header block is skipped up to the next header."""
    async with pipe_frames() as (raw, frames):
        raw.send(b"hello there\r\n" + frame(b"[1]"))
        raw.close()
        got = await collect(frames)
    assert [f.problem for f in got] == [FrameProblem.MALFORMED_HEADER, None]
    assert "not a header line" in got[0].detail
    assert got[1].body == b"[1]"


async def test_invalid_or_missing_length_skips_the_unknown_body() -> None:
    """protocol.md Errors: bad Content-Length values never crash; the next frame is served
    even though it follows the unparseable body with no newline in between."""
    bad_blocks = [
        b"Content-Length: abc\r\n\r\n{}",
        b"Content-Length: -5\r\n\r\n{}",
        b"Content-Type: text/plain\r\n\r\n{}",
        b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
        b"Content-Length: 2\n\n{}",
        b"Content-Length: 2\r\nno colon here\r\n\r\n{}",
        b"Content-Length: 99999999999999999999999\r\n\r\n{}",
    ]
    async with pipe_frames() as (raw, frames):
        for block in bad_blocks:
            raw.send(block + frame(b'"ok"'))
        raw.close()
        got = await collect(frames)
    assert [f.problem for f in got] == [FrameProblem.MALFORMED_HEADER, None] * len(bad_blocks)
    assert {f.body for f in got if f.problem is None} == {b'"ok"'}


async def test_endless_header_is_malformed_after_64_kib_then_resyncs() -> None:
    async with pipe_frames() as (raw, frames):
        feeding = asyncio.ensure_future(feed(raw, b"X-Junk: " + b"j" * 70_000 + frame(b"[7]")))
        got = await collect(frames)
        await feeding
    assert [f.problem for f in got] == [FrameProblem.MALFORMED_HEADER, None]
    assert got[1].body == b"[7]"


async def test_blank_lines_between_frames_are_skipped_quietly() -> None:
    async with pipe_frames() as (raw, frames):
        raw.send(frame(b"1") + b"\r\n" + frame(b"2") + b"\r\n\r\n" + frame(b"3"))
        raw.close()
        assert [f.body for f in await collect(frames)] == [b"1", b"2", b"3"]


async def test_eof_ends_iteration_and_truncated_body_is_dropped() -> None:
    async with pipe_frames() as (raw, frames):
        raw.send(frame(b"[1]") + b"Content-Length: 10\r\n\r\n[2")
        raw.close()
        assert [f.body for f in await collect(frames)] == [b"[1]"]
        assert await next_frame(frames) is None


async def test_eof_inside_header_or_oversized_body_ends_iteration() -> None:
    async with pipe_frames(max_body=4) as (raw, frames):
        raw.send(b"Content-Length: 100\r\n\r\nabc")
        raw.close()
        got = await collect(frames)
    assert [f.problem for f in got] == [FrameProblem.OVERSIZED]
    async with pipe_frames() as (raw, frames):
        raw.send(b"Content-Len")
        raw.close()
        assert await collect(frames) == []


def test_parse_header_block_reports_length_or_reason() -> None:
    assert parse_header_block(b"Content-Length: 12") == 12
    assert parse_header_block(b"content-length:0\r\nContent-Type: x") == 0
    assert parse_header_block(b"Content-Type: x") == BadHeader("missing Content-Length", 1)
    # S8: glued to garbage, a header is one unknown header name; the search looks inside it.
    assert parse_header_block(b"nullContent-Length: 5") == BadHeader("missing Content-Length", 1)
    assert parse_header_block(b"Content-Length: 1e3") == BadHeader(
        "invalid Content-Length: b'1e3'", 23
    )
    # S8: a garbage line resumes the search inside itself, where a valid header may start.
    assert parse_header_block(b"Bad Name: 1\r\nContent-Length: 1") == BadHeader(
        "not a header line: b'Bad Name: 1'", 1
    )
    assert parse_header_block(b"Content-Length: 1\r\nx}Content-Length: 5") == BadHeader(
        "not a header line: b'x}Content-Length: 5'", 20
    )


@asynccontextmanager
async def writer_to_frames() -> AsyncIterator[tuple[MessageWriter, FrameReader]]:
    read_fd, write_fd = os.pipe()
    reader = await open_read_pipe(read_fd)
    stream = await open_write_pipe(write_fd)
    try:
        yield MessageWriter(stream), FrameReader(reader)
    finally:
        stream.close()
        await stream.wait_closed()


async def test_writer_is_compact_utf8_with_byte_length() -> None:
    async with writer_to_frames() as (writer, frames):
        await writer.write({"text": "héllo ✓", "n": [1, 2]})
        got = await next_frame(frames)
    assert got == Frame(body='{"text":"héllo ✓","n":[1,2]}'.encode())


async def test_concurrent_writes_never_interleave_on_a_slow_reader() -> None:
    """Frames far larger than the pipe buffer, written from many tasks at once, arrive whole."""
    payloads = [{"i": i, "pad": chr(ord("a") + i) * 300_000} for i in range(8)]
    async with writer_to_frames() as (writer, frames):
        async with anyio.create_task_group() as tg:
            for payload in payloads:
                tg.start_soon(writer.write, payload)
            received = []
            for _ in payloads:
                await asyncio.sleep(0.001)  # a slow reader: the writers must wait on drain
                got = await next_frame(frames)
                assert got is not None and got.problem is None
                received.append(json.loads(got.body))
    assert sorted(received, key=lambda p: p["i"]) == payloads


async def test_writer_raises_connection_error_once_output_is_closed() -> None:
    read_fd, write_fd = os.pipe()
    stream = await open_write_pipe(write_fd)
    writer = MessageWriter(stream)
    os.close(read_fd)
    try:
        with pytest.raises(ConnectionError):
            for _ in range(100):  # the transport notices the closed pipe within a few polls
                await writer.write({"hello": True})
                await asyncio.sleep(0.01)
        assert writer.is_closing()
    finally:
        stream.close()


@settings(max_examples=60, deadline=None)
@given(
    bodies=st.lists(st.binary(min_size=0, max_size=300), max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=12),
    lower=st.booleans(),
)
def test_any_split_of_a_valid_stream_yields_the_same_frames(
    bodies: list[bytes], cuts: list[int], lower: bool
) -> None:
    """Framing does not depend on how reads are split. Splits are fed straight into an
    asyncio.StreamReader (the class the pipes use) so each cut is a separate read for sure."""
    header = b"content-length" if lower else b"Content-Length"
    stream = b"".join(frame(body, header) for body in bodies)
    points = sorted({min(c, len(stream)) for c in cuts} | {0, len(stream)})

    async def run() -> list[bytes]:
        reader = asyncio.StreamReader()
        frames = FrameReader(reader)
        got: list[bytes] = []
        for start, end in itertools.pairwise(points):
            reader.feed_data(stream[start:end])
            while (item := await asyncio.wait_for(_ready(frames), 5)) is not None:
                got.append(item.body)
        reader.feed_eof()
        got.extend(f.body for f in [f async for f in frames])
        return got

    assert asyncio.run(run()) == bodies


async def _ready(frames: FrameReader) -> Frame | None:
    """The next frame if the bytes fed so far complete one, else None (without waiting)."""
    task = asyncio.ensure_future(frames.next_frame())
    await asyncio.sleep(0)
    if task.done():
        return task.result()
    task.cancel()
    return None
