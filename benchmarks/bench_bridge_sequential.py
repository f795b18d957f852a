"""Time per question answered instantly, end to end through `askbridge serve`, one after another.

One session runs a script of 2,000 steps, each one `ask_user_question` tool
call (one single-select question), then a final text step. The client answers
every `userQuestions/ask` instantly, inline in its read loop. Each question is
the whole path: the model's tool call is logged → `userQuestions/ask` goes out
→ the answer comes back and is checked (V8) → the tool result is logged
(committed to the real SQLite store in a temporary data directory) → the next
step starts. Timed: `session/prompt` sent to its response, divided by 2,000;
the best of 3 such prompts (each in a new session) after a 200-question
warm-up. Measured in both host modes (`_servers.py`): inline, and attached to
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

QUESTIONS = 2_000
WARMUP = 200
REPEATS = 3  # best of 3, for the echo and the bridge alike: the machine is shared
# The default cap (1000 model requests per turn) would end the 2,001-step turn early.
SERVE_ARGS = ("--max-turn-requests", "100000")


async def echo_round_trip() -> float:
    """Seconds per sequential echo round trip carrying one ask's params."""
    async with RawClient.spawn(echo_command()) as client:
        for _ in range(WARMUP):
            await client.request("echo", ASK_PARAMS)
        best = float("inf")
        for _ in range(REPEATS):
            start = time.perf_counter()
            for _ in range(QUESTIONS):
                await client.request("echo", ASK_PARAMS)
            best = min(best, time.perf_counter() - start)
        return best / QUESTIONS


async def bridge_question(mode: str, data_dir: str) -> tuple[float, float]:
    """(seconds per question, server CPU seconds per question): the best of REPEATS
    prompts of QUESTIONS asks, each in a new session, after a warm-up prompt."""
    results: Counter[str] = Counter()

    def count_results(method: str, params: Any) -> None:
        update = params["update"] if method == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call_update":
            results[update["status"]] += 1

    def on_request(method: str, params: Any) -> Any:
        assert method == "userQuestions/ask", method
        return answer_first_options(params)

    async with bridge(mode, data_dir, on_request, SERVE_ARGS) as (client, pid):
        client.on_notification = count_results
        best, cpu = float("inf"), float("inf")
        for questions in (WARMUP, *[QUESTIONS] * REPEATS):
            new = await client.request("session/new", {"model": ask_script(questions)})
            cpu_start, start = cpu_seconds(pid), time.perf_counter()
            result = await client.request("session/prompt", text_prompt(new["sessionId"]))
            if questions == QUESTIONS:
                best = min(best, time.perf_counter() - start)
                cpu = min(cpu, cpu_seconds(pid) - cpu_start)
            assert result == {"stopReason": "end_turn"}, result
        assert results == {"completed": WARMUP + QUESTIONS * REPEATS}, results
        await shut_down(client)
        return best / QUESTIONS, cpu / QUESTIONS


async def main(modes: list[str]) -> None:
    echo = await echo_round_trip()
    per_question: dict[str, float] = {}
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
            seconds, cpu = await bridge_question(mode, data_dir)
        per_question[mode] = seconds
        print(
            f"bridge_sequential[{mode}]: {QUESTIONS} questions, {seconds * 1e6:.0f} us/question "
            f"(server CPU {cpu * 1e6:.0f} us); echo {echo * 1e6:.0f} us/round trip; "
            f"ratio {against(seconds / echo, '<=', 2)}",
            flush=True,
        )
    if len(per_question) == 2:
        attached, inline = per_question["attached"], per_question["inline"]
        print(
            f"bridge_attach_overhead: attached {attached * 1e6:.0f} us/question, "
            f"inline {inline * 1e6:.0f} us/question; ratio {against(attached / inline, '<=', 1.1)}"
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
