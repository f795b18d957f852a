"""Start-up latency of `askbridge serve`: process start to the `initialize` response.

Each run spawns `askbridge serve --data-dir D` with the `initialize` request
already waiting on its stdin, and times spawn → the response read back (then
shuts the server down, untimed). D is created by a warm-up run, so the timed
runs open an existing store, as an editor starting the server on a workday
would. Median of 9 runs.

Baseline, measured in the same run: spawn → exit of `python -c "import pygls"`
(the same interpreter), median of 9 runs. For scale the line also shows the
echo server's spawn → first response (asyncio only, no askbridge).

Bytecode: this environment sets PYTHONDONTWRITEBYTECODE=1 and the editable
source tree has no `__pycache__`, so every start would compile askbridge from
source, which an installed package never does. All children therefore run with
PYTHONPYCACHEPREFIX pointing at a temporary directory (filled by the warm-up
runs), for the baseline and the server alike. Target: ratio ≤ 2. Prints one line:

    bridge_startup: initialize answered after 205.1 ms; python -c "import pygls" 11.4 ms; echo server 60.2 ms; ratio 18.0x (target <= 2x)

Run: `.venv/bin/python benchmarks/bench_bridge_startup.py`
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence

from _echo_baseline import INITIALIZE_PARAMS, FrameSplitter, echo_command, frame, serve_command

RUNS = 9
WARMUP = 2
_CHUNK = 64 * 1024


async def first_response(command: Sequence[str], env: dict[str, str], request: bytes) -> float:
    """Seconds from spawning `command` (with `request` queued on its stdin) to its first frame."""
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=env
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(request)
    splitter = FrameSplitter()
    while not (bodies := splitter.feed(await process.stdout.read(_CHUNK))):
        pass
    elapsed = time.perf_counter() - start
    assert b'"result"' in bodies[0], bodies[0][:200]
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    await process.stdin.drain()
    process.stdin.close()
    await process.wait()
    return elapsed


async def import_pygls(env: dict[str, str]) -> float:
    start = time.perf_counter()
    process = await asyncio.create_subprocess_exec(sys.executable, "-c", "import pygls", env=env)
    assert await process.wait() == 0
    return time.perf_counter() - start


async def median_of(runs: int, measure: Callable[[], Awaitable[float]]) -> float:
    for _ in range(WARMUP):
        await measure()
    return statistics.median([await measure() for _ in range(runs)])


async def main() -> None:
    initialize = frame(
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE_PARAMS}
    )
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as tmp:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, "pycache")
        serve = serve_command(os.path.join(tmp, "data"))
        pygls = await median_of(RUNS, lambda: import_pygls(env))
        echo = await median_of(RUNS, lambda: first_response(echo_command(), env, initialize))
        bridge = await median_of(RUNS, lambda: first_response(serve, env, initialize))
    print(
        f"bridge_startup: initialize answered after {bridge * 1e3:.1f} ms; "
        f'python -c "import pygls" {pygls * 1e3:.1f} ms; echo server {echo * 1e3:.1f} ms; '
        f"ratio {bridge / pygls:.1f}x (target <= 2x)"
    )


if __name__ == "__main__":
    asyncio.run(main())
