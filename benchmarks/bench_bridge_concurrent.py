"""Questions per second through `askbridge serve` with 64 sessions asking at the same time.

64 sessions each run a script of 50 steps with one `ask_user_question` call per
step (3,200 questions in all); all 64 `session/prompt`s are sent at once and
the client answers every `userQuestions/ask` instantly, inline in its read
loop. Each question is the whole path (tool call logged → ask → answer
checked → result committed to the real SQLite store in a temporary data
directory → next step). Timed: first prompt sent to last prompt answered,
best of 3 rounds (64 new sessions each), after a warm-up round of 5 steps.
Measured in both host modes (`_servers.py`): inline, and attached to a running
`askbridge host`.

Baseline, measured in the same run with the same client (`_echo_baseline.RawClient`):
the raw-pipe echo server's pipelined rate, 64 requesters each sending its next
request as soon as its previous one is answered (64 requests always in flight,
as with the 64 sessions), 3,200 requests carrying one ask's params, best of 3
rounds after a warm-up round. Target:
ratio (bridge questions/s ÷ echo requests/s) ≥ 0.15. The server's CPU per question
(from /proc/<pid>/stat, the least of the timed rounds) is shown for scale: on a
shared machine it moves far less than the rate. Prints one line per mode:

    bridge_concurrent[inline]: 64 sessions, 3200 questions, 2100 questions/s (server CPU 180 us/question); echo 21000 requests/s; ratio 0.100x (target >= 0.15x) MISSED

Run: `.venv/bin/python benchmarks/bench_bridge_concurrent.py [inline|attached]`
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import Counter
from typing import Any

from _echo_baseline import (
    ASK_PARAMS,
    RawClient,
    answer_first_options,
    ask_script,
    echo_command,
    text_prompt,
)
from _servers import MODES, bridge, cpu_seconds, shut_down
from _targets import against

SESSIONS = 64
STEPS = 50
WARMUP_STEPS = 5
QUESTIONS = SESSIONS * STEPS
REPEATS = 3  # best of 3, for the echo and the bridge alike: the machine is shared


async def echo_rate() -> float:
    """Echo requests per second with SESSIONS requests always in flight."""

    async def requester(client: RawClient, count: int) -> None:
        for _ in range(count):
            await client.request("echo", ASK_PARAMS)

    best = float("inf")
    async with RawClient.spawn(echo_command()) as client:
        for count in (WARMUP_STEPS, *[STEPS] * REPEATS):
            start = time.perf_counter()
            async with asyncio.TaskGroup() as tg:
                for _ in range(SESSIONS):
                    tg.create_task(requester(client, count))
            if count == STEPS:
                best = min(best, time.perf_counter() - start)
        return QUESTIONS / best


async def bridge_rate(mode: str, data_dir: str) -> tuple[float, float]:
    """(questions per second, server CPU seconds per question) over SESSIONS concurrent
    prompts of STEPS asks each: the best round of REPEATS, each figure on its own."""
    results: Counter[str] = Counter()

    def on_request(method: str, params: Any) -> Any:
        assert method == "userQuestions/ask", method
        return answer_first_options(params)

    def count_results(method: str, params: Any) -> None:
        update = params["update"] if method == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call_update":
            results[update["status"]] += 1

    async with bridge(mode, data_dir, on_request) as (client, pid):
        client.on_notification = count_results
        best, cpu = float("inf"), float("inf")
        for steps in (WARMUP_STEPS, *[STEPS] * REPEATS):
            sessions = [
                (await client.request("session/new", {"model": ask_script(steps)}))["sessionId"]
                for _ in range(SESSIONS)
            ]
            cpu_start, start = cpu_seconds(pid), time.perf_counter()
            prompts = [client.request_nowait("session/prompt", text_prompt(s)) for s in sessions]
            stops = await asyncio.gather(*prompts)
            if steps == STEPS:
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, cpu_seconds(pid) - cpu_start)
            assert all(stop == {"stopReason": "end_turn"} for stop in stops), stops
        assert results == {"completed": SESSIONS * (WARMUP_STEPS + STEPS * REPEATS)}, results
        await shut_down(client)
        return QUESTIONS / best, cpu / QUESTIONS


async def main(modes: list[str]) -> None:
    echo = await echo_rate()
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
            rate, cpu = await bridge_rate(mode, data_dir)
        print(
            f"bridge_concurrent[{mode}]: {SESSIONS} sessions, {QUESTIONS} questions, "
            f"{rate:.0f} questions/s (server CPU {cpu * 1e6:.0f} us/question); "
            f"echo {echo:.0f} requests/s; "
            f"ratio {against(rate / echo, '>=', 0.15, digits=3)}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
