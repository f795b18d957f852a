"""Two `askbridge serve` hosts on one PostgreSQL team store, against one SQLite host in
the same run: an answer given on host B reaching the agent on host A (issue 35's (i)),
and 64 sessions asking at once split over two hosts (issue 35's (j)).

PostgreSQL 15 on this machine over its unix socket, started for the run and removed at
its end, failure or not (tests/postgres.py), with the durability class of SQLite's
NORMAL (`fsync=off`, `synchronous_commit=on`, as bench_store_commit.py). Every host is
a real `askbridge serve --host inline` process on a data directory of its own, the
team ones with `ASKBRIDGE_STORE` naming the database; the clients are the raw client
of the other benchmarks (`_echo_baseline.RawClient`).

- (i) answer B->A: host A runs a session whose script model asks ROUND_QUESTIONS timed
  questions one after another; A's own client leaves its cards unanswered. A window on
  host B (`session/load` of A's session, a replica) answers each card in its read loop
  as soon as it arrives. Timed from B's answer written to B's pipe to A's client
  reading the call's `tool_call_update` `completed` (the agent's tool result: B's
  answer committed in A's log and consumed). Beside it, the same session on one SQLite
  host whose own window answers: answer written to result read. Rounds alternate the
  two (new sessions each round) after a warm-up round; percentiles over every round
  (ROUNDS x ROUND_QUESTIONS = 200 each). Target: p99 <= 50 ms on PostgreSQL, the
  SQLite host's figures for scale.
- (j) 64 sessions asking at once: 32 on host A and 32 on host B (one PostgreSQL), each
  host's client answering its own cards at once (as bench_bridge_concurrent.py), all
  64 prompts sent together; against 64 sessions on one SQLite host. Questions per
  second from the first prompt sent to the last prompt's end, rounds alternating the
  two; the ratio is the median over the rounds of PostgreSQL's rate / SQLite's (timed
  one right after the other). Target: >= 0.5x.

Prints one line per target:

    team_hosts(i): answer B->A p50 6.1 ms p99 14.0 ms; one SQLite host p50 0.9 ms p99 2.1 ms; 14.0ms (target <= 50ms) MET
    team_hosts(j): 64 sessions, 2 hosts on PostgreSQL 800 questions/s, one SQLite host 1500 questions/s; 0.53x (target >= 0.5x) MET

Run: `.venv/bin/python benchmarks/bench_team_hosts.py`
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _echo_baseline import HOLD, INITIALIZE_PARAMS, RawClient, ask_script, text_prompt
from _servers import LONG_PROMPT_ARGS, answer_asks, count_tool_results, serve_command, shut_down
from _targets import against

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from postgres import Database, pg_bin, start_server

ROUNDS = 5
ROUND_QUESTIONS = 40
WARM_UP = 5
SESSIONS = 64
STEPS = 25  # per session and round in (j): 1,600 questions a round
J_ROUNDS = 5
ARGS = ("--ask-mode", "timed", *LONG_PROMPT_ARGS)


def pct(values: list[float], q: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


class AnswerToResult:
    """Answer written (by whichever client answers) to the owner's client reading the
    call's `completed` tool result, one question at a time."""

    def __init__(self) -> None:
        self.answered_at = 0.0
        self.ms: list[float] = []
        self.completed = 0
        self.keep = False

    def answer(self, method: str, params: Any) -> Any:
        assert method == "userQuestions/ask", method
        reply = answer_asks(method, params)
        self.answered_at = time.perf_counter()
        return reply

    def result(self, method: str, params: Any) -> None:
        update = params["update"] if method == "session/update" else {}
        if update.get("sessionUpdate") == "tool_call_update" and update["status"] == "completed":
            self.completed += 1
            if self.keep:
                self.ms.append((time.perf_counter() - self.answered_at) * 1000)


async def started(
    stack: contextlib.AsyncExitStack,
    data_dir: str,
    on_request: Any,
    env: dict[str, str],
) -> RawClient:
    command = serve_command("inline", data_dir, *ARGS)
    client = await stack.enter_async_context(RawClient.spawn(command, on_request, env))
    await client.request("initialize", INITIALIZE_PARAMS)
    client.notify("initialized", {})
    return client


async def one_session(owner: RawClient, steps: int, window: RawClient | None = None) -> None:
    """A new session on `owner` asking `steps` questions in one prompt, loaded first in
    `window` (a replica on another host) when given."""
    sid = (await owner.request("session/new", {"model": ask_script(steps)}))["sessionId"]
    if window is not None:
        await window.request("session/load", {"sessionId": sid})  # an error reply raises
    stop = await owner.request("session/prompt", text_prompt(sid))
    assert stop == {"stopReason": "end_turn"}, stop


async def answers(
    stack: contextlib.AsyncExitStack, root: str, store: dict[str, str], solo: dict[str, str]
) -> tuple[AnswerToResult, AnswerToResult]:
    team, alone = AnswerToResult(), AnswerToResult()
    a = await started(stack, f"{root}/a", lambda m, p: HOLD, store)
    b = await started(stack, f"{root}/b", team.answer, store)
    s = await started(stack, f"{root}/s", alone.answer, solo)
    a.on_notification, s.on_notification = team.result, alone.result
    await one_session(a, WARM_UP, b)
    await one_session(s, WARM_UP)
    team.keep = alone.keep = True
    for _ in range(ROUNDS):
        await one_session(a, ROUND_QUESTIONS, b)
        await one_session(s, ROUND_QUESTIONS)
    questions = WARM_UP + ROUNDS * ROUND_QUESTIONS
    assert team.completed == alone.completed == questions, (team.completed, alone.completed)
    for client in (a, b, s):
        await shut_down(client)
    return team, alone


async def rate(owners: list[RawClient], steps: int) -> float:
    """Questions per second: SESSIONS sessions spread over `owners`, prompts sent at once."""
    sessions = [
        (owner, (await owner.request("session/new", {"model": ask_script(steps)}))["sessionId"])
        for i in range(SESSIONS)
        for owner in [owners[i % len(owners)]]
    ]
    start = time.perf_counter()
    prompts = [owner.request_nowait("session/prompt", text_prompt(s)) for owner, s in sessions]
    stops = await asyncio.gather(*prompts)
    wall = time.perf_counter() - start
    assert all(stop == {"stopReason": "end_turn"} for stop in stops), stops
    return SESSIONS * steps / wall


async def concurrent(
    stack: contextlib.AsyncExitStack, root: str, store: dict[str, str], solo: dict[str, str]
) -> tuple[list[float], list[float]]:
    a = await started(stack, f"{root}/ja", answer_asks, store)
    b = await started(stack, f"{root}/jb", answer_asks, store)
    s = await started(stack, f"{root}/js", answer_asks, solo)
    counts = [count_tool_results(client) for client in (a, b, s)]
    await rate([a, b], 2)
    await rate([s], 2)
    team: list[float] = []
    alone: list[float] = []
    for _ in range(J_ROUNDS):
        team.append(await rate([a, b], STEPS))
        alone.append(await rate([s], STEPS))
    per_host = SESSIONS // 2 * (2 + J_ROUNDS * STEPS)
    assert [c["completed"] for c in counts] == [per_host, per_host, 2 * per_host], counts
    for client in (a, b, s):
        await shut_down(client)
    return team, alone


async def main() -> None:
    try:
        pg_bin()
    except RuntimeError as exc:
        print(f"team_hosts: not measured: {exc}")
        return
    server = start_server({"fsync": "off", "synchronous_commit": "on"})
    try:
        url = Database(server, server.new_database()).password_url()
        solo = {k: v for k, v in os.environ.items() if k != "ASKBRIDGE_STORE"}
        store = {**solo, "ASKBRIDGE_STORE": url}
        with tempfile.TemporaryDirectory(prefix="askbridge-bench-") as root:
            async with contextlib.AsyncExitStack() as stack:
                team, alone = await answers(stack, root, store, solo)
            async with contextlib.AsyncExitStack() as stack:
                team_rates, solo_rates = await concurrent(stack, root, store, solo)
    finally:
        server.remove()
    p99 = pct(team.ms, 99)
    load = f"[{os.cpu_count()} cpus, load {os.getloadavg()[0]:.1f}]"
    print(
        f"team_hosts(i): answer B->A p50 {pct(team.ms, 50):.1f} ms p99 {p99:.1f} ms "
        f"({len(team.ms)} questions); one SQLite host p50 {pct(alone.ms, 50):.1f} ms "
        f"p99 {pct(alone.ms, 99):.1f} ms; {against(p99, '<=', 50.0, 'ms', 1)} {load}",
        flush=True,
    )
    ratio = statistics.median(t / s for t, s in zip(team_rates, solo_rates, strict=True))
    print(
        f"team_hosts(j): {SESSIONS} sessions, 2 hosts on PostgreSQL {max(team_rates):.0f} "
        f"questions/s, one SQLite host {max(solo_rates):.0f} questions/s (best of "
        f"{J_ROUNDS}); {against(ratio, '>=', 0.5)} {load}",
        flush=True,
    )


if __name__ == "__main__":
    asyncio.run(main())
