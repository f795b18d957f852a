"""The process's stdio for the front doors: the read side as a connection's `Inbound`
protocol, the write side as an asyncio stream.

`open_stdio()` dups fd 0 and fd 1 and then points fd 1 and `sys.stdout` at
stderr, so a stray print (ours, a library's, a child process's) can never
corrupt the protocol stream. asyncio can only poll pipes, sockets and ttys: a
regular file or /dev/null on either side is bridged through a pipe by a small
copier thread (`join_copiers()` waits for them after the writer is closed).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from askbridge.jsonrpc.inbound import Inbound

_P = TypeVar("_P", bound=asyncio.BaseProtocol)

_CHUNK = 64 * 1024


class _WritePipeProtocol(asyncio.streams.FlowControlMixin):
    """Flow control for a write-only pipe, with the close waiter StreamWriter.wait_closed needs."""

    def __init__(self) -> None:
        super().__init__()
        self._closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self._closed.done():
            self._closed.set_result(None)

    def _get_close_waiter(self, stream: object) -> asyncio.Future[None]:
        return self._closed


_copiers: list[threading.Thread] = []


def _needs_copier(fd: int) -> bool:
    """Regular files and character devices that are not ttys (/dev/null): asyncio's
    epoll cannot watch them, and registering them fails or never signals."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISREG(mode) or (stat.S_ISCHR(mode) and not os.isatty(fd))


def _copy_in_thread(src: int, dst: int) -> None:
    """Copy src to dst until EOF, then close both: asyncio cannot poll regular files."""

    def run() -> None:
        try:
            while chunk := os.read(src, _CHUNK):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
        except OSError:
            pass
        finally:
            os.close(src)
            os.close(dst)

    thread = threading.Thread(target=run, name="askbridge-stdio-copy", daemon=True)
    thread.start()
    _copiers.append(thread)


def join_copiers(timeout: float = 5.0) -> None:
    """Wait for file copies started by the open_* functions here (after closing writers)."""
    for thread in _copiers:
        thread.join(timeout)


async def open_inbound(fd: int) -> Inbound:
    """A connection's read side on `fd` (takes ownership of the fd): the read pipe's
    protocol, which frames and dispatches what arrives in the turn it arrives.

    A regular file (`askbridge serve < requests.bin`) is fed through a pipe by a
    thread, since asyncio can only poll pipes, sockets and ttys.
    """
    return await _read_pipe(fd, Inbound)


async def open_read_pipe(fd: int, limit: int = _CHUNK) -> asyncio.StreamReader:
    """A StreamReader on `fd` (takes ownership of the fd); a regular file goes through a pipe."""
    reader = asyncio.StreamReader(limit=limit)
    await _read_pipe(fd, lambda: asyncio.StreamReaderProtocol(reader))
    return reader


async def _read_pipe(fd: int, protocol: Callable[[], _P]) -> _P:
    if _needs_copier(fd):
        r, w = os.pipe()
        _copy_in_thread(fd, w)
        fd = r
    pipe = os.fdopen(fd, "rb", buffering=0)
    _, made = await asyncio.get_running_loop().connect_read_pipe(protocol, pipe)
    return made


async def open_write_pipe(fd: int) -> asyncio.StreamWriter:
    """A StreamWriter on `fd` (takes ownership of the fd); a regular file goes through a pipe."""
    if _needs_copier(fd):
        r, w = os.pipe()
        _copy_in_thread(r, fd)
        fd = w
    loop = asyncio.get_running_loop()
    pipe = os.fdopen(fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(_WritePipeProtocol, pipe)
    return asyncio.StreamWriter(transport, protocol, None, loop)


def redirect_stdout_to_stderr() -> None:
    """Point fd 1 and sys.stdout at stderr, so stray prints (ours, libraries', child
    processes') can never corrupt the frame stream. Call only after fd 1 was dup'd."""
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr


async def open_stdio(redirect_stdout: bool = True) -> tuple[Inbound, asyncio.StreamWriter]:
    """The read side and a stream on dup'd copies of fd 0 and fd 1; by default fd 1 then
    goes to stderr."""
    in_fd, out_fd = os.dup(0), os.dup(1)
    if redirect_stdout:
        redirect_stdout_to_stderr()
    return await open_inbound(in_fd), await open_write_pipe(out_fd)
