"""A data directory's host on a ManualClock (tests/lsp_driver.py), and the test's
client of it in either host mode: deadlines are passed with `advance`, not slept through.

    async with clock_host(tmp_path / "data", "--ask-mode", "timed", ...) as host:
        async with host.client(host_mode) as server:     # a RawServer
            ...
            await host.advance(1500)                      # past the deadline

`inline`: the client is the driver's own (the host's stdio, as `--host inline`).
`auto`: an `askbridge serve --host auto` front door with the same flags, attached to the
driver's host through `host.sock` (the descriptors handed over, as in auto mode); the
host is the driver rather than an `askbridge host` since the clock lives in the host.
Either way the client speaks LSP frames over real pipes to the real door code.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio

from askbridge.testing.wire import RawServer

DRIVER = str(Path(__file__).with_name("lsp_driver.py"))


@dataclass
class ClockHost:
    driver: RawServer  # the host's own client
    data_dir: Path
    flags: tuple[str, ...]

    async def advance(self, ms: float) -> float:
        """Move the host's clock by `ms`, firing every deadline due; the clock's time."""
        reply = await self.driver.call("_askbridgeTest/advance", {"ms": ms})
        assert "result" in reply, reply
        return float(reply["result"]["now"])

    async def claims(self, agent_id: str, call_id: str, count: int) -> None:
        """Once the host's wait for `call_id` has `count` claims (lsp_driver.py)."""
        params = {"agentId": agent_id, "callId": call_id, "count": count}
        reply = await self.driver.call("_askbridgeTest/claims", params, timeout=15)
        assert "result" in reply, reply

    @asynccontextmanager
    async def client(self, host_mode: str) -> AsyncIterator[RawServer]:
        """The test's client in `host_mode` (the module docstring says which)."""
        if host_mode == "inline":
            yield self.driver
            return
        async with RawServer.start(self.data_dir, *self.flags, host="auto") as server:
            yield server


@asynccontextmanager
async def clock_host(data_dir: Path, *flags: str) -> AsyncIterator[ClockHost]:
    """The driver serving `data_dir` with `askbridge serve`'s `flags`, listening on host.sock
    by the time this yields; given end of input (killed if it lingers) on leaving."""
    with tempfile.TemporaryFile() as stderr:
        process = await asyncio.create_subprocess_exec(
            *(sys.executable, DRIVER, "serve", "--data-dir", str(data_dir), *flags),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
        )
        driver = RawServer(process, stderr)
        driver.data_dir = data_dir
        host = ClockHost(driver, data_dir, flags)
        try:
            await host.advance(0)  # answered once the host serves, host.sock included
            yield host
        finally:
            driver.close_input()
            with anyio.CancelScope(shield=True):
                with anyio.move_on_after(10):
                    await process.wait()
                if process.returncode is None:
                    process.kill()
                    await process.wait()
