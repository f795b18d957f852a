"""Memory over time: 20,000 questions over 200 sessions, then idle — does RSS come back?

One client (the lean `RawClient`) creates 200 sessions, each a script of 100
`ask_user_question` steps, then prompts them 20 at a time (ten waves); it
answers every question instantly. When all 20,000 are answered and every
prompt has ended `end_turn`, the client stays connected and idle.

Measured: the serving process's VmRSS (the inline `askbridge serve`, or the
`askbridge host` a front door attached to):

- start: after `initialize`, a warm-up session that asked once and was
  answered (what the first question imports or caches is not history), and
  the 200 sessions were created (their scripts are the sessions' models, not
  history);
- end: after the last prompt ended and 1 s of idle.

What a session keeps after its turns is what its folds need (S10): its
projection, inbox and counters, never its events, so end − start stays small
however long the history. Target (e): end − start ≤ 10 MB. The
client still follows all 200 sessions, so none is unloaded: this measures
what a loaded session keeps. Prints one line per mode:

    bridge_memory_over_time[inline]: 20000 questions over 200 sessions; RSS 41.0 MiB at start, 44.2 MiB idle after; grew 3.2 MB (target <= 10 MB) MET

Run: `.venv/bin/python benchmarks/bench_bridge_memory_over_time.py [inline|attached]`
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from collections import Counter
from typing import Any

from _echo_baseline import answer_first_options, ask_script, text_prompt
from _servers import MODES, bridge, rss_bytes, shut_down
from _targets import against

SESSIONS = 200
STEPS = 100
WAVE = 20
IDLE_S = 1.0
TARGET_BYTES = 10 * 1000 * 1000


async def grown(mode: str, data_dir: str) -> tuple[int, int]:
    """(RSS at start, RSS idle after all the questions) of the serving process."""
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
        warm = await client.request("session/new", {"model": ask_script(1)})
        await client.request("session/prompt", text_prompt(warm["sessionId"]))
        model = ask_script(STEPS)
        sessions = [
            (await client.request("session/new", {"model": model}))["sessionId"]
            for _ in range(SESSIONS)
        ]
        await asyncio.sleep(IDLE_S)
        start = rss_bytes(pid)
        for wave in range(0, SESSIONS, WAVE):
            prompts = [
                client.request_nowait("session/prompt", text_prompt(s))
                for s in sessions[wave : wave + WAVE]
            ]
            stops = await asyncio.gather(*prompts)
            assert all(stop == {"stopReason": "end_turn"} for stop in stops), stops[:3]
        assert results == {"completed": 1 + SESSIONS * STEPS}, results
        await asyncio.sleep(IDLE_S)
        end = rss_bytes(pid)
        await shut_down(client)
        return start, end


async def main(modes: list[str]) -> None:
    mib = 1024 * 1024
    for mode in modes:
        with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as data_dir:
            start, end = await grown(mode, data_dir)
        print(
            f"bridge_memory_over_time[{mode}]: {SESSIONS * STEPS} questions over {SESSIONS} "
            f"sessions; RSS {start / mib:.1f} MiB at start, {end / mib:.1f} MiB idle after; "
            f"grew {against((end - start) / 1e6, '<=', TARGET_BYTES / 1e6, ' MB', digits=1)}",
            flush=True,
        )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:] or list(MODES)))
