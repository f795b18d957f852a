"""Time per question with 10 windows attached to a session vs with 1 (target g).

One `askbridge host` on a temporary data directory; W windows, each its own
`askbridge serve --host auto` front door (an editor window), all attached to it.
Window 1 creates a session whose script asks QUESTIONS single-select questions
in a row; windows 2..W load it (session/load), so they follow it and every
question goes to all W windows (M2). Window 1 answers each `userQuestions/ask`
instantly, inline in its read loop; the others leave it open (as a window whose
user has not looked yet) and get it withdrawn (`$/cancelRequest`) when window 1's
answer wins. Timed: `session/prompt` sent to its response, divided by QUESTIONS;
best of 3 prompts (each in a new session) after a warm-up. The fan-out's cost per
extra window is the difference. Beside each, the host process's CPU time per
question (the least of the 3, from /proc, 10 ms ticks): on a shared machine the
wall-clock ratio moves with the load, the host's CPU much less.

Baseline, measured in the same run: the same with W = 1. Target: W = 10 costs at
most 1.5× W = 1 per question. Prints one line:

    fanout_windows: 10 windows 812 us/question (host CPU 700), 1 window 604 us/question (host CPU 450); ratio 1.34x (target <= 1.5x) MET

Run: `.venv/bin/python benchmarks/bench_fanout_windows.py`
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
from typing import Any

from _echo_baseline import (
    HOLD,
    INITIALIZE_PARAMS,
    RawClient,
    answer_first_options,
    ask_script,
    text_prompt,
)
from _servers import (
    LONG_PROMPT_ARGS,
    cpu_seconds,
    serve_command,
    shut_down,
    start_host,
    stop_host,
)
from _targets import against

QUESTIONS = 300
WARMUP = 30
REPEATS = 3
WINDOWS = 10
SERVE_ARGS = LONG_PROMPT_ARGS  # one prompt asks every question


def answerer(method: str, params: Any) -> Any:
    assert method == "userQuestions/ask", method
    return answer_first_options(params)


def onlooker(method: str, params: Any) -> Any:
    assert method == "userQuestions/ask", method
    return HOLD  # withdrawn by $/cancelRequest once the answering window's reply wins


async def per_question(windows: int) -> tuple[float, float]:
    """Seconds per question answered in window 1 with `windows` windows following, and the
    host's CPU seconds per question."""
    with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
        host = start_host(data_dir, *SERVE_ARGS)
        try:
            async with contextlib.AsyncExitStack() as stack:
                clients = []
                for n in range(windows):
                    command = serve_command("attached", data_dir, *SERVE_ARGS)
                    client = await stack.enter_async_context(
                        RawClient.spawn(command, answerer if n == 0 else onlooker)
                    )
                    await client.request("initialize", INITIALIZE_PARAMS)
                    client.notify("initialized", {})
                    clients.append(client)
                first, others = clients[0], clients[1:]
                best = cpu = float("inf")
                for questions in (WARMUP, *[QUESTIONS] * REPEATS):
                    new = await first.request("session/new", {"model": ask_script(questions)})
                    sid = new["sessionId"]
                    await asyncio.gather(
                        *(c.request("session/load", {"sessionId": sid}) for c in others)
                    )
                    start, host_start = time.perf_counter(), cpu_seconds(host.pid)
                    result = await first.request("session/prompt", text_prompt(sid))
                    if questions == QUESTIONS:
                        best = min(best, time.perf_counter() - start)
                        cpu = min(cpu, cpu_seconds(host.pid) - host_start)
                    assert result == {"stopReason": "end_turn"}, result
                for n, client in enumerate(others, 2):
                    # Every question reached every window (M2) and was withdrawn there.
                    assert client.notified["$/cancelRequest"] >= WARMUP, (n, client.notified)
                for client in clients:
                    await shut_down(client)
        finally:
            await asyncio.to_thread(stop_host, data_dir, host)
    return best / QUESTIONS, cpu / QUESTIONS


async def main() -> None:
    one, one_cpu = await per_question(1)
    many, many_cpu = await per_question(WINDOWS)
    print(
        f"fanout_windows: {WINDOWS} windows {many * 1e6:.0f} us/question "
        f"(host CPU {many_cpu * 1e6:.0f}), 1 window {one * 1e6:.0f} us/question "
        f"(host CPU {one_cpu * 1e6:.0f}); ratio {against(many / one, '<=', 1.5)}",
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
