"""Time per question answered instantly, end to end through `askbridge serve`, one after another.

One session runs a script of 2,000 steps, each one `ask_user_question` tool
call (one single-select question), then a final text step. The client answers
every `userQuestions/ask` instantly, inline in its read loop. Each question is
the whole path: the model's tool call is logged → `userQuestions/ask` goes out
→ the answer comes back and is checked (V8) → the tool result is logged
(committed to the real SQLite store in a temporary data directory) → the next
step starts. Timed: `session/prompt` sent to its response, divided by 2,000.

Baseline, measured in the same run with the same client (`_echo_baseline.RawClient`):
the round trip of one JSON-RPC request through the raw-pipe echo server, 2,000
in sequence, each carrying the same params as one `userQuestions/ask`. Both
servers run in a subprocess and are warmed up first. Target: ratio ≤ 3.
Prints one line:

    bridge_sequential: 2000 questions, 412 us/question; echo 135 us/round trip; ratio 3.05x (target <= 3x)

Run: `.venv/bin/python benchmarks/bench_bridge_sequential.py`
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections import Counter
from typing import Any

from _echo_baseline import (
    ASK_PARAMS,
    INITIALIZE_PARAMS,
    RawClient,
    answer_first_options,
    ask_script,
    echo_command,
    serve_command,
    text_prompt,
)

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


async def bridge_question(data_dir: str) -> float:
    """Seconds per question: the best of REPEATS prompts of QUESTIONS asks, each in a new
    session (after a warm-up prompt)."""
    results: Counter[str] = Counter()

    def count_results(method: str, params: Any) -> None:
        update = params["update"] if method == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call_update":
            results[update["status"]] += 1

    def on_request(method: str, params: Any) -> Any:
        assert method == "userQuestions/ask", method
        return answer_first_options(params)

    async with RawClient.spawn(serve_command(data_dir, *SERVE_ARGS), on_request) as client:
        client.on_notification = count_results
        await client.request("initialize", INITIALIZE_PARAMS)
        client.notify("initialized", {})
        best = float("inf")
        for questions in (WARMUP, *[QUESTIONS] * REPEATS):
            new = await client.request("session/new", {"model": ask_script(questions)})
            start = time.perf_counter()
            result = await client.request("session/prompt", text_prompt(new["sessionId"]))
            if questions == QUESTIONS:
                best = min(best, time.perf_counter() - start)
            assert result == {"stopReason": "end_turn"}, result
        assert results == {"completed": WARMUP + QUESTIONS * REPEATS}, results
        await client.request("shutdown", None)
        client.notify("exit")
        await client.process.wait()
        assert client.process.returncode == 0, client.process.returncode
        return best / QUESTIONS


async def main() -> None:
    echo = await echo_round_trip()
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
        bridge = await bridge_question(data_dir)
    print(
        f"bridge_sequential: {QUESTIONS} questions, {bridge * 1e6:.0f} us/question; "
        f"echo {echo * 1e6:.0f} us/round trip; ratio {bridge / echo:.2f}x (target <= 3x)"
    )


if __name__ == "__main__":
    asyncio.run(main())
