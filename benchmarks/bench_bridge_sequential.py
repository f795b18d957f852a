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
3. Targets: each mode ≤ 2× the echo round trip (target a), and attached
within 10% of inline. The server's CPU per question (from
/proc/<pid>/stat, over the timed prompts) is shown for scale. Prints three lines:

    bridge_sequential[inline]: 2000 questions, 412 us/question (server CPU 380 us); echo 135 us/round trip; ratio 3.05x (target <= 2x) MISSED
    bridge_sequential[attached]: …
    bridge_attach_overhead: attached 420 us/question, inline 412 us/question; ratio 1.02x (target <= 1.1x) MET

Run: `.venv/bin/python benchmarks/bench_bridge_sequential.py [inline|attached]`
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time

from _echo_baseline import (
    ASK_PARAMS,
    RawClient,
    ask_script,
    text_prompt,
)
from _servers import (
    LONG_PROMPT_ARGS,
    MODES,
    BridgeRun,
    Round,
    best,
    cpu_seconds,
    in_turn,
    paired,
    started,
)
from _targets import against

QUESTIONS = 2_000
WARMUP = 200
REPEATS = 3  # best of 3, for the echo and the bridge alike: the machine is shared
SERVE_ARGS = LONG_PROMPT_ARGS  # the 2,001-step turn is one prompt


class Echo:
    """The baseline: sequential echo round trips carrying one ask's params."""

    def __init__(self, client: RawClient) -> None:
        self.client = client

    async def round_trips(self, count: int) -> Round:
        start = time.perf_counter()
        for _ in range(count):
            await self.client.request("echo", ASK_PARAMS)
        return time.perf_counter() - start, 0.0

    async def warm_up(self) -> Round:
        return await self.round_trips(WARMUP)

    async def timed(self) -> Round:
        return await self.round_trips(QUESTIONS)


class Bridge(BridgeRun):
    """One host mode's server: each timed round is one prompt of QUESTIONS asks in a new
    session."""

    async def prompt(self, questions: int) -> Round:
        new = await self.client.request("session/new", {"model": ask_script(questions)})
        cpu_start, start = cpu_seconds(self.pid), time.perf_counter()
        result = await self.client.request("session/prompt", text_prompt(new["sessionId"]))
        wall, cpu = time.perf_counter() - start, cpu_seconds(self.pid) - cpu_start
        assert result == {"stopReason": "end_turn"}, result
        return wall, cpu

    async def warm_up(self) -> Round:
        return await self.prompt(WARMUP)

    async def timed(self) -> Round:
        return await self.prompt(QUESTIONS)


async def main(modes: list[str]) -> None:
    """The echo and every mode, all started first, then timed in turn (`in_turn`), the
    ratios paired by round (`paired`)."""
    async with contextlib.AsyncExitStack() as stack:
        echo_client, served = await started(stack, modes, SERVE_ARGS)
        bridges = {mode: Bridge(*run) for mode, run in served.items()}
        rounds = await in_turn({"echo": Echo(echo_client), **bridges}, REPEATS)
        for run in bridges.values():
            await run.done(WARMUP + QUESTIONS * REPEATS)
    least = best(rounds)
    echo = least["echo"][0] / QUESTIONS
    for mode in modes:
        seconds, cpu = (x / QUESTIONS for x in least[mode])
        print(
            f"bridge_sequential[{mode}]: {QUESTIONS} questions, {seconds * 1e6:.0f} us/question "
            f"(server CPU {cpu * 1e6:.0f} us); echo {echo * 1e6:.0f} us/round trip; "
            f"ratio {against(paired(rounds, mode, 'echo'), '<=', 2)}",
            flush=True,
        )
    if len(modes) == 2:
        attached, inline = least["attached"][0] / QUESTIONS, least["inline"][0] / QUESTIONS
        print(
            f"bridge_attach_overhead: attached {attached * 1e6:.0f} us/question, "
            f"inline {inline * 1e6:.0f} us/question; "
            f"ratio {against(paired(rounds, 'attached', 'inline'), '<=', 1.1)}"
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
