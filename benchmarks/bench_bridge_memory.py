"""Server memory per pending question: 10,000 unanswered asks held open in `askbridge serve`.

Layout: 100 sessions, each prompted once with a script whose first step makes
100 `ask_user_question` calls (the host runs one step's tool calls
concurrently), so 10,000 `userQuestions/ask` requests are outstanding at once.
The client receives every ask and never answers (as if 10,000 cards were open).

Measured: the serving process's resident set (VmRSS in /proc/<pid>/status),
in both host modes (`_servers.py`): the inline `askbridge serve`, and the
`askbridge host` a front door attached to.

- idle: after `initialize`, after the 100 sessions were created (their headers,
  scripts and loaded-session state are not per-question cost), and after a
  warm-up session asked and was answered once, so that code paths imported or
  cached lazily on the first question (pydantic serializers, the relay, the
  SQLite statement cache) count as idle, not as question cost;
- pending: once the client has received all 10,000 asks, after a short settle.

Per pending question = (pending − idle) / 10,000. This is everything one
waiting question costs the server: its tool-call task and coroutine frames,
the outgoing request's bookkeeping, the question's events in the session log
and the projection, and allocator slack. The line reports bytes per
question against the 2 KB (2,048 bytes) target. A second line per mode
compares idle RSS with the echo server's (target (c) ≤ 2×): the
server as an editor leaves it when it starts — `initialize` answered, nothing
asked, no session — like the echo server, which has none either; for scale it
also shows the RSS after the warm-up question (what the first question imports
and caches) and with the 100 sessions (the per-question idle above). At the
end the client sends `shutdown` (which withdraws every card) and `exit`.
Prints, per mode:

    bridge_memory[inline]: 10000 pending questions (idle 40.1 MiB, pending 58.2 MiB); 1900 B/question (target <= 2048 B/question) MET
    bridge_idle_rss[inline]: 38.0 MiB (46.0 after one question, 78.0 with 100 sessions); echo server 20.0 MiB; ratio 1.90x (target <= 2x) MET

Run: `.venv/bin/python benchmarks/bench_bridge_memory.py [inline|attached]`
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from typing import Any

from _echo_baseline import (
    HOLD,
    RawClient,
    answer_first_options,
    ask_script,
    echo_command,
    text_prompt,
)
from _servers import MODES, bridge, rss_bytes
from _targets import against

SESSIONS = 100
CALLS_PER_STEP = 100
PENDING = SESSIONS * CALLS_PER_STEP
TARGET_BYTES = 2048
SETTLE_S = 0.5


async def echo_idle_rss() -> int:
    async with RawClient.spawn(echo_command()) as client:
        await client.request("echo", {})
        await asyncio.sleep(SETTLE_S)
        return rss_bytes(client.process.pid)


async def bridge_rss(mode: str, data_dir: str) -> tuple[int, int, int, int]:
    """RSS of the serving process: started (`initialize` answered), after one question,
    idle with the sessions, and with PENDING questions outstanding."""
    asks_seen = 0
    all_asked = asyncio.Event()
    answering = True

    def on_request(method: str, params: Any) -> Any:
        nonlocal asks_seen
        assert method == "userQuestions/ask", method
        if answering:
            return answer_first_options(params)
        asks_seen += 1
        if asks_seen == PENDING:
            all_asked.set()
        return HOLD

    async with bridge(mode, data_dir, on_request) as (client, pid):
        await asyncio.sleep(SETTLE_S)
        started = rss_bytes(pid)
        warm = await client.request("session/new", {"model": ask_script(1)})
        await client.request("session/prompt", text_prompt(warm["sessionId"]))
        await asyncio.sleep(SETTLE_S)
        asked_once = rss_bytes(pid)
        answering = False
        model = ask_script(1, CALLS_PER_STEP)
        sessions = [
            (await client.request("session/new", {"model": model}))["sessionId"]
            for _ in range(SESSIONS)
        ]
        await asyncio.sleep(SETTLE_S)
        idle = rss_bytes(pid)
        prompts = [client.request_nowait("session/prompt", text_prompt(s)) for s in sessions]
        await asyncio.wait_for(all_asked.wait(), timeout=50)
        await asyncio.sleep(SETTLE_S)
        pending = rss_bytes(pid)
        # `shutdown` withdraws every card (the client is leaving); the turns end at `exit`
        # (M6), when the client can no longer hear their replies.
        await client.request("shutdown", None)
        client.notify("exit")
        await client.process.wait()
        assert client.process.returncode == 0, client.process.returncode
        for prompt in prompts:
            assert prompt.done(), "a prompt outlived its client"
            prompt.exception()  # retrieved: the connection ended before the reply
        return started, asked_once, idle, pending


async def main(modes: list[str]) -> None:
    echo_idle = await echo_idle_rss()
    mib = 1024 * 1024
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
            started, asked_once, idle, pending = await bridge_rss(mode, data_dir)
        per_question = (pending - idle) / PENDING
        print(
            f"bridge_memory[{mode}]: {PENDING} pending questions "
            f"(idle {idle / mib:.1f} MiB, pending {pending / mib:.1f} MiB); "
            f"{against(per_question, '<=', TARGET_BYTES, ' B/question', digits=0)}"
        )
        print(
            f"bridge_idle_rss[{mode}]: {started / mib:.1f} MiB ({asked_once / mib:.1f} after one "
            f"question, {idle / mib:.1f} with {SESSIONS} sessions); echo server "
            f"{echo_idle / mib:.1f} MiB; ratio {against(started / echo_idle, '<=', 2)}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
