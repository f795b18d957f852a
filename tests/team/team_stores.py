"""Team stores for the many-host tests (G4-G8): several hosts on one database, served
(listening, renewing) in this process, and a host in a process of its own
(team_host.py) to kill -9 or pause.

    async with serving(url, "A", "B") as (a, b):     # two hosts, served until the end
        ...
    async with HostProcess.start(url, "C") as c:     # a host process
        await c.do(do="create", session="s1")
        c.kill()                                     # SIGKILL, and reaped
"""

from __future__ import annotations

import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from askbridge.core.clock import MonotonicClock, TimerHandle
from askbridge.host.store.store_postgres import PostgresEventStore

TEAM_HOST = str(Path(__file__).with_name("team_host.py"))
REPLY_TIMEOUT_S = 30.0


async def until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    """Wait for `condition`, looking every 10 ms: what another process or the database
    does (a backend ending, a renewal committed) is no event this loop can wait on."""
    with anyio.fail_after(timeout_s):
        while not condition():  # noqa: ASYNC110
            await anyio.sleep(0.01)


@asynccontextmanager
async def serving(url: str, *names: str, **options: Any) -> AsyncIterator[list[PostgresEventStore]]:
    """Stores named `names` on `url`, each served (pg_team.py) until the block ends."""
    stores: list[PostgresEventStore] = []
    try:
        async with anyio.create_task_group() as tasks:
            for name in names:
                store = await PostgresEventStore.open(url, host_name=name, **options)
                stores.append(store)
                await tasks.start(store.serve)
            try:
                yield stores
            finally:
                tasks.cancel_scope.cancel()
    finally:
        for store in stores:
            await store.close()


class ShiftedClock:
    """This machine's monotonic clock, `shift_ms` off (G7: a host whose clock disagrees)."""

    def __init__(self, shift_ms: float) -> None:
        self._clock = MonotonicClock()
        self.shift_ms = shift_ms

    def now(self) -> float:
        return self._clock.now() + self.shift_ms

    def call_at(self, when_ms: float, callback: Callable[[], None]) -> TimerHandle:
        return self._clock.call_at(when_ms - self.shift_ms, callback)


class HostProcess:
    """team_host.py running; `do(...)` sends one command and returns its reply."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.host_id = ""
        self.consumed: list[str] = []  # calls whose tool/result it committed
        self.failed: list[str] = []
        self._replies: list[dict[str, Any]] = []
        self._replied = anyio.Event()
        self.ended = anyio.Event()

    @classmethod
    @asynccontextmanager
    async def start(cls, url: str, name: str) -> AsyncIterator[HostProcess]:
        process = await anyio.open_process([sys.executable, TEAM_HOST, url, name], stderr=None)
        host = cls(process)
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(host._read)
                with anyio.fail_after(REPLY_TIMEOUT_S):
                    ready = await host._reply()
                host.host_id = ready["ready"]
                try:
                    yield host
                finally:
                    host.kill()
                    tasks.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await process.aclose()

    async def do(self, **order: Any) -> Any:
        """Send `order`; its `ok` value, or AssertionError with its error."""
        assert self.process.stdin is not None
        await self.process.stdin.send((json.dumps(order) + "\n").encode())
        with anyio.fail_after(REPLY_TIMEOUT_S):
            reply = await self._reply()
        if "error" in reply:
            raise AssertionError(reply["error"])
        return reply["ok"]

    async def _reply(self) -> dict[str, Any]:
        while not self._replies:
            if self.ended.is_set():
                raise AssertionError("the host process ended")
            self._replied = anyio.Event()
            await self._replied.wait()
        return self._replies.pop(0)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        buffer = b""
        async for chunk in self.process.stdout:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                message = json.loads(line)
                if "consumed" in message:
                    self.consumed.append(message["consumed"])
                elif "failed" in message:
                    self.failed.append(message["failed"])
                else:
                    self._replies.append(message)
                self._replied.set()
        self.ended.set()
        self._replied.set()

    def kill(self) -> None:
        """SIGKILL (kill -9): nothing of the process runs after this."""
        if self.process.returncode is None:
            os.kill(self.process.pid, signal.SIGKILL)

    def pause(self) -> None:
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)
