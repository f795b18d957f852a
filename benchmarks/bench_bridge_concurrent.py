"""Questions per second through `askbridge serve` with 64 sessions asking at the same time.

64 sessions each run a script of 50 steps with one `ask_user_question` call per
step (3,200 questions in all); all 64 `session/prompt`s are sent at once and
the client answers every `userQuestions/ask` instantly, inline in its read
loop. Each question is the whole path (tool call logged → ask → answer
checked → result committed to the real SQLite store in a temporary data
directory → next step). Timed: first prompt sent to last prompt answered,
best of 3 rounds (64 new sessions each), after a warm-up round of 5 steps, the
modes and the baseline timed in turn round after round (`main`); the ratio is the
median over the rounds of the round's echo time against the bridge's, timed one after
the other.
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

SESSIONS = 64
STEPS = 50
WARMUP_STEPS = 5
QUESTIONS = SESSIONS * STEPS
REPEATS = 3  # best of 3, for the echo and the bridge alike: the machine is shared


class Rounds:
    """A round of WARMUP_STEPS to warm up, of STEPS when timed."""

    async def round(self, steps: int) -> Round:
        raise NotImplementedError

    async def warm_up(self) -> Round:
        return await self.round(WARMUP_STEPS)

    async def timed(self) -> Round:
        return await self.round(STEPS)


class Echo(Rounds):
    """The baseline: SESSIONS requesters, each sending its next echo as soon as its
    previous one is answered; a round is `steps` echoes each."""

    def __init__(self, client: RawClient) -> None:
        self.client = client

    async def round(self, steps: int) -> Round:
        async def requester() -> None:
            for _ in range(steps):
                await self.client.request("echo", ASK_PARAMS)

        start = time.perf_counter()
        async with asyncio.TaskGroup() as tg:
            for _ in range(SESSIONS):
                tg.create_task(requester())
        return time.perf_counter() - start, 0.0


class Bridge(BridgeRun, Rounds):
    """One host mode's server: a round is SESSIONS new sessions' prompts of `steps` asks,
    sent at once."""

    async def round(self, steps: int) -> Round:
        sessions = [
            (await self.client.request("session/new", {"model": ask_script(steps)}))["sessionId"]
            for _ in range(SESSIONS)
        ]
        cpu_start, start = cpu_seconds(self.pid), time.perf_counter()
        prompts = [self.client.request_nowait("session/prompt", text_prompt(s)) for s in sessions]
        stops = await asyncio.gather(*prompts)
        wall, cpu = time.perf_counter() - start, cpu_seconds(self.pid) - cpu_start
        assert all(stop == {"stopReason": "end_turn"} for stop in stops), stops
        return wall, cpu


async def main(modes: list[str]) -> None:
    """The echo and every mode started first, then timed in turn (`in_turn`), the ratio
    paired by round (`paired`), as bench_bridge_sequential.py."""
    async with contextlib.AsyncExitStack() as stack:
        echo_client, served = await started(stack, modes)
        bridges = {mode: Bridge(*run) for mode, run in served.items()}
        rounds = await in_turn({"echo": Echo(echo_client), **bridges}, REPEATS)
        for run in bridges.values():
            await run.done(SESSIONS * (WARMUP_STEPS + STEPS * REPEATS))
    least = best(rounds)
    echo = QUESTIONS / least["echo"][0]
    for mode in modes:
        rate, cpu = QUESTIONS / least[mode][0], least[mode][1] / QUESTIONS
        # rate / echo rate = the echo's time / the bridge's, paired round by round
        print(
            f"bridge_concurrent[{mode}]: {SESSIONS} sessions, {QUESTIONS} questions, "
            f"{rate:.0f} questions/s (server CPU {cpu * 1e6:.0f} us/question); "
            f"echo {echo:.0f} requests/s; "
            f"ratio {against(paired(rounds, 'echo', mode), '>=', 0.15, digits=3)}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
