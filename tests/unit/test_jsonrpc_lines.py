"""Newline-delimited JSON-RPC (the ACP and MCP doors) over real pipes: S7, S8.

`LineReader` on one end of an os.pipe(); the other end written with plain
os.write from a thread, as a client process would.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread

from askbridge.jsonrpc.framing import Frame, FrameProblem
from askbridge.jsonrpc.lines import LineReader
from askbridge.jsonrpc.stdio import open_read_pipe


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)


@asynccontextmanager
async def lines_of(data: bytes, **kwargs: int) -> AsyncIterator[list[Frame]]:
    read_fd, write_fd = os.pipe()
    reader = LineReader(await open_read_pipe(read_fd), **kwargs)
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, _write_all, write_fd, data)
        with anyio.fail_after(10):
            yield [frame async for frame in reader]


async def test_one_message_per_line_crlf_and_blank_lines_and_an_unterminated_last_line() -> None:
    async with lines_of(b'{"a":1}\n\r\n\n{"b":2}\r\n  \n{"c":3}') as frames:
        assert [f.body for f in frames] == [b'{"a":1}', b'{"b":2}', b'{"c":3}']


async def test_S7_an_oversized_line_is_refused_unbuffered_and_the_next_line_is_read() -> None:
    data = b'{"a":1}\n' + b"x" * (3 * 1024 * 1024) + b'\n{"b":2}\n'
    tracemalloc.start()
    try:
        async with lines_of(data, max_line=256 * 1024) as frames:
            _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [f.problem for f in frames] == [None, FrameProblem.OVERSIZED, None]
    assert frames[2].body == b'{"b":2}'
    assert peak < 1024 * 1024  # never the whole 3 MiB line


async def test_S7_a_line_just_over_the_cap_in_one_chunk_is_still_refused() -> None:
    async with lines_of(b"y" * 1025 + b"\n" + b'{"ok":1}\n', max_line=1024) as frames:
        assert [f.problem for f in frames] == [FrameProblem.OVERSIZED, None]
