"""`settle()` (tests/settling.py), which hundreds of in-process tests lean on: it returns only
once every task is blocked, counting what is already queued to wake one, and never spins."""

from __future__ import annotations

import asyncio
import socket

import pytest

from settling import settle


async def test_a_waiter_a_queued_callback_will_release_has_run() -> None:
    """The group commit's shape: the waiters' future is set from a callback queued at the end
    of the loop turn, through a chain of callbacks."""
    loop = asyncio.get_running_loop()
    released = loop.create_future()
    woke: list[str] = []

    async def waiter(name: str) -> None:
        await released
        woke.append(name)

    tasks = [asyncio.create_task(waiter(name)) for name in ("a", "b")]
    await settle()
    assert woke == []
    loop.call_soon(loop.call_soon, loop.call_soon, released.set_result, None)
    await settle()
    assert woke == ["a", "b"] and all(task.done() for task in tasks)


async def test_a_reader_whose_socket_is_ready_has_read() -> None:
    """A socket the loop finds readable runs its callback outside `call_soon`."""
    loop = asyncio.get_running_loop()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.setblocking(False)
        read = asyncio.create_task(loop.sock_recv(ours, 10))
        await settle()
        assert not read.done()
        theirs.send(b"ping")
        await settle()
        assert read.done() and read.result() == b"ping"


async def test_work_that_never_ends_fails_the_settle() -> None:
    loop = asyncio.get_running_loop()

    def again() -> None:  # queues itself forever, as a spinning task would
        nonlocal handle
        handle = loop.call_soon(again)

    handle = loop.call_soon(again)
    try:
        with pytest.raises(AssertionError, match="never settled"):
            await settle()
    finally:
        handle.cancel()


async def test_a_cancelled_callback_is_not_waited_for() -> None:
    asyncio.get_running_loop().call_soon(print, "never").cancel()
    await settle()
