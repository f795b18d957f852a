"""The two ways a client reaches askbridge, as the bridge benchmarks start them.

- `inline`: `askbridge serve --host inline`, one process that is its data
  directory's host and serves its own client (H3);
- `attached`: `askbridge host` started first (as the first front door of a
  workday would), then `askbridge serve --host auto`, which hands its stdio to
  that host (H4) and only waits. The host reads and writes the client's pipes
  itself, so the client's bytes never pass through the front door.

    async with bridge("attached", data_dir, on_request) as (client, server_pid):
        ...   # server_pid: the process that does the work (the host when attached)

Every process a benchmark starts is gone when the block ends: the front door
exits with its client, the host is stopped (`askbridge host --stop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any, Protocol

from _echo_baseline import (
    INITIALIZE_PARAMS,
    RawClient,
    RequestHandler,
    answer_first_options,
    echo_command,
)

MODES = ("inline", "attached")
# For a bench that runs all its questions in one prompt: above the turn's request bound
# (1,000 by default) and the prompt's (S16: 500, the prompt's own requests included).
LONG_PROMPT_ARGS = (
    "--max-turn-requests",
    "100000",
    "--delegation-limits",
    "requests=100000",
    "--raise-delegation-limits",
)
HOST_IDLE_EXIT_S = "600"


def askbridge(*args: str) -> list[str]:
    """The `askbridge` command as an editor runs it: the installed console script (no
    `runpy`, as `python -m askbridge.cli` would add), else the module."""
    script = os.path.join(os.path.dirname(sys.executable), "askbridge")
    if os.access(script, os.X_OK):
        return [script, *args]
    return [sys.executable, "-m", "askbridge.cli", *args]


def serve_command(mode: str, data_dir: str, *args: str) -> list[str]:
    """`askbridge serve` reaching its host the way `mode` says."""
    host = "inline" if mode == "inline" else "auto"
    return askbridge("serve", "--data-dir", data_dir, "--host", host, *args)


def start_host(
    data_dir: str,
    *args: str,
    env: dict[str, str] | None = None,
    runner: Sequence[str] | None = None,
    timeout: float = 10,
) -> subprocess.Popen:
    """`askbridge host` on `data_dir`, answering on its socket when this returns.
    `runner`: the command that runs `askbridge` with the arguments after it (a profiler's
    wrapper, profile_host.py), instead of the console script; `timeout`: for its start."""
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    command = ["host", "--data-dir", data_dir, "--idle-exit", HOST_IDLE_EXIT_S, *args]
    with open(os.path.join(data_dir, "host.log"), "ab") as log:
        host = subprocess.Popen(
            [*runner, *command] if runner is not None else askbridge(*command),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            env=env,
        )
    socket_path = os.path.join(data_dir, "host.sock")
    deadline = time.monotonic() + timeout
    while not os.path.exists(socket_path):
        if host.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"askbridge host did not start (status {host.poll()})")
        time.sleep(0.005)
    return host


def stop_host(data_dir: str, host: subprocess.Popen | None = None, wait_s: float = 10) -> None:
    """Stop the data directory's host (`--stop`); the one we started must be gone (killed
    after `wait_s`)."""
    subprocess.run(
        askbridge("host", "--data-dir", data_dir, "--stop"), capture_output=True, check=False
    )
    if host is not None:
        try:
            host.wait(wait_s)
        except subprocess.TimeoutExpired:
            host.kill()
            host.wait()


@contextlib.asynccontextmanager
async def bridge(
    mode: str,
    data_dir: str,
    on_request: RequestHandler | None = None,
    args: Sequence[str] = (),
) -> AsyncIterator[tuple[RawClient, int]]:
    """An initialized client of askbridge in `mode`, and the pid of the serving process."""
    host = start_host(data_dir, *args) if mode == "attached" else None
    try:
        async with RawClient.spawn(serve_command(mode, data_dir, *args), on_request) as client:
            await client.request("initialize", INITIALIZE_PARAMS)
            client.notify("initialized", {})
            yield client, (host.pid if host is not None else client.process.pid)
    finally:
        if host is not None:
            await asyncio.to_thread(stop_host, data_dir, host)


Round = tuple[float, float]  # one timed round: wall seconds, the server's CPU seconds


class Timed(Protocol):
    async def warm_up(self) -> Round: ...
    async def timed(self) -> Round: ...


async def in_turn(runs: Mapping[str, Timed], repeats: int) -> dict[str, list[Round]]:
    """Every run warmed up, then timed in turn, round after round (echo, inline, attached,
    echo, ...): a slow spell of the shared machine lands on all of them, not on whichever
    ran during it. Timed in blocks one after the other, drift between blocks shows in the
    ratios (attached/inline read 0.97-1.19 for the same code)."""
    for run in runs.values():
        await run.warm_up()
    rounds: dict[str, list[Round]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            rounds[name].append(await run.timed())
    return rounds


def best(rounds: Mapping[str, list[Round]]) -> dict[str, Round]:
    """Each run's least wall and least CPU time over its rounds (each on its own)."""
    return {
        name: (min(w for w, _ in timed), min(c for _, c in timed)) for name, timed in rounds.items()
    }


def paired(rounds: Mapping[str, list[Round]], a: str, b: str) -> float:
    """The median over the rounds of a's time / b's time in the same round: each ratio
    compares two runs timed one right after the other. (The best of each on its own
    pairs whichever quiet spell each happened to get: on this machine the echo's best
    once came from a spell none of the bridge's rounds had, 179 against 230-500 us.)"""
    return statistics.median(x[0] / y[0] for x, y in zip(rounds[a], rounds[b], strict=True))


async def started(
    stack: contextlib.AsyncExitStack, modes: Sequence[str], args: Sequence[str] = ()
) -> tuple[RawClient, dict[str, tuple[RawClient, int]]]:
    """The echo server's client, and each mode's (client, server pid) in a temporary data
    directory of its own, all answering every ask (`answer_asks`); gone with `stack`."""
    echo = await stack.enter_async_context(RawClient.spawn(echo_command()))
    bridges: dict[str, tuple[RawClient, int]] = {}
    for mode in modes:
        data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="askbridge-bench-"))
        bridges[mode] = await stack.enter_async_context(bridge(mode, data_dir, answer_asks, args))
    return echo, bridges


class BridgeRun:
    """A bench's client of one host mode, counting its questions' results."""

    def __init__(self, client: RawClient, pid: int) -> None:
        self.client, self.pid = client, pid
        self.results = count_tool_results(client)

    async def done(self, questions: int) -> None:
        """Every one of `questions` ended `completed`; the front door shut down, status 0."""
        assert self.results == {"completed": questions}, self.results
        await shut_down(self.client)


def count_tool_results(client: RawClient) -> Counter[str]:
    """The `tool_call_update` statuses the client's `session/update`s report, counted as
    they come (every question of a bench run must end `completed`)."""
    results: Counter[str] = Counter()

    def count(method: str, params: Any) -> None:
        update = params["update"] if method == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call_update":
            results[update["status"]] += 1

    client.on_notification = count
    return results


def answer_asks(method: str, params: Any) -> Any:
    """The bench client's answer to every `userQuestions/ask`: at once, first options."""
    assert method == "userQuestions/ask", method
    return answer_first_options(params)


async def shut_down(client: RawClient) -> None:
    """`shutdown` + `exit`; the front door must exit 0."""
    await client.request("shutdown", None)
    client.notify("exit")
    await client.process.wait()
    assert client.process.returncode == 0, client.process.returncode


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of `pid` so far (from /proc/<pid>/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
