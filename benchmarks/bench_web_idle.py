"""The web door at rest: its memory, and the work it does while no browser is connected.

Issue 20's target: "the door idles under 40 MiB RSS and adds no work to the host
while no browser is connected". A host is started (`_servers.start_host`), then
`askbridge web --host auto` attaches to it; once the door printed its URL and
settled, nothing connects to it for IDLE_S. Measured:

- the door process's resident set (VmRSS) at the end of that rest — the target
  is absolute (<= 40 MiB); the echo server's idle RSS, measured in the same run,
  is shown for scale (a small asyncio Python process that has answered one
  request: the floor any Python door stands on);
- the CPU time the door and its child (`askbridge serve`, its link to the host)
  used over the rest, and the host's: no timer, poll or keepalive runs while
  nobody looks, so the door's target is at most one clock tick (10 ms), and the
  host's must not exceed what it used in an equal rest just before the door
  started (its own housekeeping) by more than a tick.

Where the door's memory goes (import-time RSS, added in the door's own order,
measured 2026-12-02): the interpreter 8.7 MiB, the command line (`askbridge.cli`)
3.6, `ssl` 4.8 and `asyncio` 2.7, anyio and h11 0.6, then 12.8 for pydantic and
the protocol models that `askbridge.jsonrpc` imports at load time (its
`messages.error_reply` maps a ValidationError), the JSON-RPC core 1.3 and the
door itself 0.5; the rest is the running loop. aiohttp in place of h11 was +17
(49 MiB at rest). A JSON-RPC core that imported pydantic only when a
ValidationError can exist would take the door to about 23 MiB.

How many requests the door sends its host with and without a browser is
tests/web/test_web_idle.py's (counted message by message, against a stand-in host).
Prints one line:

    web_idle: door at rest 36.6 MiB (target <= 40 MiB) MET; echo server 20.1 MiB for scale (1.82x); door CPU in 3 s 0 ms (target <= 10 ms) MET; host CPU added 0 ms (target <= 10 ms) MET

Run: `.venv/bin/python benchmarks/bench_web_idle.py`
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import tempfile

from _echo_baseline import RawClient, echo_command
from _servers import askbridge, cpu_seconds, rss_bytes, start_host, stop_host
from _targets import against

IDLE_S = 3.0
SETTLE_S = 1.0
TARGET_MIB = 40
TICK_MS = 10
MIB = 1024 * 1024


async def echo_idle_rss() -> int:
    async with RawClient.spawn(echo_command()) as client:
        await client.request("echo", {})
        await asyncio.sleep(SETTLE_S)
        return rss_bytes(client.process.pid)


def children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(p) for p in f.read().split()]


async def door_at_rest(data_dir: str) -> tuple[int, float, float]:
    """(door RSS, door + child CPU ms, host CPU ms over the rest minus over a rest before)."""
    host = start_host(data_dir)
    try:
        before = cpu_seconds(host.pid)
        await asyncio.sleep(IDLE_S)
        host_alone = cpu_seconds(host.pid) - before
        door = await asyncio.create_subprocess_exec(
            *askbridge("web", "--data-dir", data_dir, "--listen", "127.0.0.1:0", "--host", "auto"),
            stdin=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        assert door.stderr is not None
        try:
            line = (await asyncio.wait_for(door.stderr.readline(), 30)).decode()
            assert re.search(r"open http://127\.0\.0\.1:\d+/#token=", line), line
            await asyncio.sleep(SETTLE_S)
            procs = [door.pid, *children(door.pid)]
            assert len(procs) == 2, procs  # the door and its `askbridge serve`
            start = sum(cpu_seconds(p) for p in procs)
            host_start = cpu_seconds(host.pid)
            await asyncio.sleep(IDLE_S)
            used = sum(cpu_seconds(p) for p in procs) - start
            host_used = cpu_seconds(host.pid) - host_start
            rss = rss_bytes(door.pid)
        finally:
            door.send_signal(signal.SIGINT)
            status = await asyncio.wait_for(door.wait(), 15)
        assert status == 0, f"askbridge web exited {status}"
        return rss, used * 1000, (host_used - host_alone) * 1000
    finally:
        stop_host(data_dir, host)


async def main() -> None:
    echo = await echo_idle_rss()
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-web-idle-") as tmp:
        rss, door_ms, host_ms = await door_at_rest(os.path.join(tmp, "data"))
    print(
        f"web_idle: door at rest {against(rss / MIB, '<=', TARGET_MIB, ' MiB', digits=1)}; "
        f"echo server {echo / MIB:.1f} MiB for scale ({rss / echo:.2f}x); "
        f"door CPU in {IDLE_S:g} s {against(door_ms, '<=', TICK_MS, ' ms', digits=0)}; "
        f"host CPU added {against(max(0.0, host_ms), '<=', TICK_MS, ' ms', digits=0)}",
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
