"""Profile the host over the (a) or (b) workload: where a question's CPU goes.

Not a benchmark (`make bench` runs only `bench_*.py`): a tool for the next step on
targets (a) and (b); the profile figures in benchmarks/README.md are measured with it.

    .venv/bin/python benchmarks/profile_host.py cprofile  OUT [--sequential] [--rounds N]
    .venv/bin/python benchmarks/profile_host.py callgrind OUT [--sequential] [--rounds N]
    .venv/bin/python benchmarks/profile_host.py calls OUT [--sequential] [--rounds N]

    ... [--host inline|attached]    # which host is profiled (default inline)

- The workload is `bench_bridge_concurrent.py`'s (64 sessions of 50 steps at once), or
  with `--sequential` `bench_bridge_sequential.py`'s shape (one session, 2,000 steps).
  A short warm-up round runs first and is not profiled.
- `--host attached`: as the benches' attached mode (`_servers.py`), `askbridge host` is
  started first on a fresh data directory, under the profiler, then the client's front
  door with `--host auto` hands it its stdio; the process profiled and measured is the
  pid `askbridge host --status` names (checked to be the one started), not the front
  door's. The host is stopped (`--stop`, killed if it hangs) when the script ends.
- `cprofile`: the server runs under this script as a wrapper that starts a
  `cProfile.Profile(time.process_time)` on SIGUSR1 and dumps it to OUT on SIGUSR2, so
  only the timed prompts are in the profile (`session/new` is not).
- `callgrind`: the server runs under `valgrind --tool=callgrind --instr-atstart=no`,
  switched on for the timed prompts with `callgrind_control -i on|off`; the instruction
  count per question is the "Collected" figure divided by the questions (printed).
  Instruction counts are what to judge a change of the question path by: wall-clock is
  too noisy on 2 shared cores.
- `calls`: reads a cProfile dump and prints Python calls per question, by file and
  by function (the "~520 calls per question, 75 dict.get" figures); give it the
  `--sequential` and `--rounds` of the run that wrote the dump.

Every process it starts is gone when it returns (the client sends `shutdown`/`exit`
and waits for the server).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import pstats
import signal
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _echo_baseline import (
    INITIALIZE_PARAMS,
    RawClient,
    ask_script,
    text_prompt,
)
from _servers import (
    LONG_PROMPT_ARGS,
    answer_asks,
    askbridge,
    cpu_seconds,
    serve_command,
    start_host,
    stop_host,
)

CONCURRENT = (64, 50)  # sessions, steps: bench_bridge_concurrent.py's run
SEQUENTIAL = (1, 2000)  # bench_bridge_sequential.py's run
SELF = os.path.abspath(__file__)


def _wrapped_server(out: str) -> None:
    """Run `askbridge` here, profiling between SIGUSR1 and SIGUSR2."""
    import cProfile

    profile: list[cProfile.Profile] = []

    def start(_sig: int, _frame: Any) -> None:
        profile.append(cProfile.Profile(time.process_time))
        profile[-1].enable()

    def stop(_sig: int, _frame: Any) -> None:
        profile[-1].disable()
        profile[-1].dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from askbridge.cli.entry import main

    sys.argv = ["askbridge", *sys.argv[sys.argv.index("--") + 1 :]]
    sys.exit(main())


async def _drive(kind: str, out: str, sessions: int, steps: int, rounds: int, host: str) -> None:
    data_dir = tempfile.mkdtemp(prefix="askbridge-profile-")
    limit = LONG_PROMPT_ARGS  # as bench_bridge_sequential.py: 2,000 tool steps are one turn
    runner = [sys.executable, SELF, "_wrapped", out, "--"]
    if kind == "callgrind":
        valgrind = ["valgrind", "--tool=callgrind", "--instr-atstart=no"]
        runner = [*valgrind, f"--callgrind-out-file={out}", *runner]
    if host == "inline":
        serve = ["serve", "--data-dir", data_dir, "--host", "inline", *limit]
        await _prompts(kind, [*runner, *serve], None, sessions, steps, rounds)
        return
    # As bench_bridge_sequential.py's attached mode: `askbridge host` (here under the
    # profiler) first, then a front door with `--host auto` hands it its stdio.
    daemon = start_host(data_dir, *limit, runner=runner, timeout=120)
    try:
        pid = _host_pid(data_dir, daemon.pid)
        await _prompts(
            kind, serve_command("attached", data_dir, *limit), pid, sessions, steps, rounds
        )
    finally:  # nothing outlives the script: the daemon is stopped (killed if it hangs)
        await asyncio.to_thread(stop_host, data_dir, daemon, 120)


def _host_pid(data_dir: str, started: int) -> int:
    """The pid the data directory's host gives in `askbridge host --status`: the process
    doing the work, which must be the one started under the profiler."""
    command = askbridge("host", "--status", "--data-dir", data_dir)
    status = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    pid = int(status.split("askbridge host pid ", 1)[1].split(",", 1)[0])
    assert pid == started, (pid, started, status)
    return pid


async def _prompts(
    kind: str, cmd: list[str], server_pid: int | None, sessions: int, steps: int, rounds: int
) -> None:
    """The warm-up and the timed rounds through a front door `cmd`, profiling `server_pid`
    (None: the front door's own process, an inline host)."""
    async with RawClient.spawn(cmd, answer_asks) as client:
        await client.request("initialize", INITIALIZE_PARAMS)
        client.notify("initialized", {})
        pid = client.process.pid if server_pid is None else server_pid
        for timed, n in [(False, 5), *[(True, steps)] * rounds]:
            ids = [
                (await client.request("session/new", {"model": ask_script(n)}))["sessionId"]
                for _ in range(sessions)
            ]
            if timed:
                _switch(kind, pid, on=True)
                await asyncio.sleep(0.2)  # the signal lands before the first prompt
            c0, t0 = cpu_seconds(pid), time.perf_counter()
            stops = await asyncio.gather(
                *[client.request_nowait("session/prompt", text_prompt(s)) for s in ids]
            )
            c1, t1 = cpu_seconds(pid), time.perf_counter()
            assert all(s == {"stopReason": "end_turn"} for s in stops), stops
            if timed:
                _switch(kind, pid, on=False)
                await asyncio.sleep(0.3)  # the dump is written
                questions = sessions * n
                print(
                    f"round: {questions} questions, server CPU {1e6 * (c1 - c0) / questions:.0f} us/question, "
                    f"wall {t1 - t0:.2f} s (under the profiler)",
                    flush=True,
                )
        await client.request("shutdown", None)
        client.notify("exit")
        await client.process.wait()
    if kind == "callgrind":
        print(
            f"instructions per question: the 'Collected' figure above / {sessions * steps * rounds}"
        )


def _switch(kind: str, pid: int, *, on: bool) -> None:
    if kind == "cprofile":
        os.kill(pid, signal.SIGUSR1 if on else signal.SIGUSR2)
        return
    if not on:
        subprocess.run(["callgrind_control", "-d", str(pid)], check=True, capture_output=True)
    subprocess.run(
        ["callgrind_control", "-i", "on" if on else "off", str(pid)],
        check=True,
        capture_output=True,
    )


def _calls(path: str, questions: int) -> None:
    stats: Any = pstats.Stats(path)
    by_file: collections.Counter[str] = collections.Counter()
    own_time: collections.Counter[str] = collections.Counter()
    rows = []
    for (file, line, name), (_cc, calls, tottime, _ct, _callers) in stats.stats.items():
        key = (
            file.split("askbridge/")[-1]
            if "askbridge/" in file
            else (file.split("/")[-1] if file != "~" else name)
        )
        by_file[key] += calls
        own_time[key] += tottime
        rows.append((calls, tottime, f"{key}:{line}({name})"))
    print(f"Python calls per question: {sum(by_file.values()) / questions:.0f}")
    for key, calls in by_file.most_common(40):
        print(f"{calls / questions:7.1f} {own_time[key] * 1e6 / questions:7.1f} us  {key}")
    print()
    for calls, tottime, name in sorted(rows, reverse=True)[:70]:
        print(f"{calls / questions:7.2f} {tottime * 1e6 / questions:7.1f} us  {name}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_wrapped":
        _wrapped_server(sys.argv[2])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("kind", choices=("cprofile", "callgrind", "calls"))
    parser.add_argument("out", help="the profile written (cprofile, callgrind) or read (calls)")
    parser.add_argument(
        "--sequential", action="store_true", help="one session of 2,000 steps, as (a)"
    )
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--host",
        choices=("inline", "attached"),
        default="inline",
        help="profile an inline host, or the `askbridge host` a front door attaches to",
    )
    args = parser.parse_args()
    sessions, steps = SEQUENTIAL if args.sequential else CONCURRENT
    if args.kind == "calls":  # the same --sequential and --rounds as the profile's run
        _calls(args.out, sessions * steps * args.rounds)
        return
    asyncio.run(_drive(args.kind, args.out, sessions, steps, args.rounds, args.host))


if __name__ == "__main__":
    main()
