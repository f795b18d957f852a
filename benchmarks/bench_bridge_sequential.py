"""Time per question answered instantly, end to end through `askbridge serve`, one after another.

One session runs a script of 2,000 steps, each one `ask_user_question` tool
call (one single-select question), then a final text step. The client answers
every `userQuestions/ask` instantly, inline in its read loop. Each question is
the whole path: the model's tool call is logged → `userQuestions/ask` goes out
→ the answer comes back and is checked (V8) → the tool result is logged
(committed to the real SQLite store in a temporary data directory) → the next
step starts. Timed: `session/prompt` sent to its response, divided by 2,000;
the best of 3 such prompts (each in a new session) after a 200-question
warm-up, the modes and the baseline timed in turn round after round (`main`);
a ratio is the median over the rounds of the two runs timed one after the other
(`paired`). Measured in both host modes (`_servers.py`): inline, and attached to
a running `askbridge host`.

Baseline, measured in the same run with the same client (`_echo_baseline.RawClient`):
the round trip of one JSON-RPC request through the raw-pipe echo server, 2,000
in sequence, each carrying the same params as one `userQuestions/ask`, best of
3. Targets: each mode ≤ 2× the echo round trip (issue 12 a), and attached
within 10% of inline (issue 10). The server's CPU per question (from
/proc/<pid>/stat, over the timed prompts) is shown for scale. Prints three lines:

    bridge_sequential[inline]: 2000 questions, 412 us/question (server CPU 380 us); echo 135 us/round trip; ratio 3.05x (target <= 2x) MISSED
    bridge_sequential[attached]: …
    bridge_attach_overhead: attached 420 us/question, inline 412 us/question; ratio 1.02x (target <= 1.1x) MET

Run: `.venv/bin/python benchmarks/bench_bridge_sequential.py [inline|attached]`
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import sys
import tempfile
import time

from _echo_baseline import (
    ASK_PARAMS,
    RawClient,
    ask_script,
    echo_command,
    text_prompt,
)
from _servers import MODES, answer_asks, bridge, count_tool_results, cpu_seconds, shut_down
from _targets import against

QUESTIONS = 2_000
WARMUP = 200
REPEATS = 3  # best of 3, for the echo and the bridge alike: the machine is shared
# The default cap (1000 model requests per turn) would end the 2,001-step turn early.
SERVE_ARGS = ("--max-turn-requests", "100000")


class Echo:
    """The baseline: sequential echo round trips carrying one ask's params."""

    def __init__(self, client: RawClient) -> None:
        self.client = client

    async def warm_up(self) -> None:
        for _ in range(WARMUP):
            await self.client.request("echo", ASK_PARAMS)

    async def timed(self) -> tuple[float, float]:
        start = time.perf_counter()
        for _ in range(QUESTIONS):
            await self.client.request("echo", ASK_PARAMS)
        return time.perf_counter() - start, 0.0


class Bridge:
    """One host mode's server: each timed round is one prompt of QUESTIONS asks in a new
    session; (wall, server CPU) seconds."""

    def __init__(self, client: RawClient, pid: int) -> None:
        self.client, self.pid = client, pid
        self.results = count_tool_results(client)

    async def prompt(self, questions: int) -> tuple[float, float]:
        new = await self.client.request("session/new", {"model": ask_script(questions)})
        cpu_start, start = cpu_seconds(self.pid), time.perf_counter()
        result = await self.client.request("session/prompt", text_prompt(new["sessionId"]))
        wall, cpu = time.perf_counter() - start, cpu_seconds(self.pid) - cpu_start
        assert result == {"stopReason": "end_turn"}, result
        return wall, cpu

    async def warm_up(self) -> None:
        await self.prompt(WARMUP)

    async def timed(self) -> tuple[float, float]:
        return await self.prompt(QUESTIONS)


async def main(modes: list[str]) -> None:
    """The echo and every mode, all started first, then timed in turn round after round
    (echo, inline, attached, echo, …), REPEATS rounds, ratios paired by round: a slow spell
    of the shared machine lands on all of them, not on whichever ran during it. (Until
    the eighth session each was timed in one block after the other, so drift between
    blocks showed in the ratios: attached/inline read 0.97–1.19 in one session.)"""
    async with contextlib.AsyncExitStack() as stack:
        echo_client = await stack.enter_async_context(RawClient.spawn(echo_command()))
        runs: dict[str, Echo | Bridge] = {"echo": Echo(echo_client)}
        for mode in modes:
            data_dir = stack.enter_context(tempfile.TemporaryDirectory(prefix="askbridge-bench-"))
            client, pid = await stack.enter_async_context(
                bridge(mode, data_dir, answer_asks, SERVE_ARGS)
            )
            runs[mode] = Bridge(client, pid)
        for run in runs.values():
            await run.warm_up()
        rounds: dict[str, list[tuple[float, float]]] = {name: [] for name in runs}
        for _ in range(REPEATS):
            for name, run in runs.items():
                rounds[name].append(await run.timed())
        for mode in modes:
            bridge_run = runs[mode]
            assert isinstance(bridge_run, Bridge)
            assert bridge_run.results == {"completed": WARMUP + QUESTIONS * REPEATS}, (
                bridge_run.results
            )
            await shut_down(bridge_run.client)
    best = {
        name: [min(x) / QUESTIONS for x in zip(*timed, strict=True)]
        for name, timed in rounds.items()
    }
    echo = best["echo"][0]
    for mode in modes:
        seconds, cpu = best[mode]
        print(
            f"bridge_sequential[{mode}]: {QUESTIONS} questions, {seconds * 1e6:.0f} us/question "
            f"(server CPU {cpu * 1e6:.0f} us); echo {echo * 1e6:.0f} us/round trip; "
            f"ratio {against(paired(rounds, mode, 'echo'), '<=', 2)}",
            flush=True,
        )
    if len(modes) == 2:
        attached, inline = best["attached"][0], best["inline"][0]
        print(
            f"bridge_attach_overhead: attached {attached * 1e6:.0f} us/question, "
            f"inline {inline * 1e6:.0f} us/question; "
            f"ratio {against(paired(rounds, 'attached', 'inline'), '<=', 1.1)}"
        )


def paired(rounds: dict[str, list[tuple[float, float]]], a: str, b: str) -> float:
    """The median over the rounds of a's time / b's time in the same round: each ratio
    compares two runs timed one right after the other. (The best of each on its own
    pairs whichever quiet spell each happened to get: on this machine the echo's best
    once came from a spell none of the bridge's rounds had, 179 against 230-500 us.)"""
    return statistics.median(x[0] / y[0] for x, y in zip(rounds[a], rounds[b], strict=True))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
